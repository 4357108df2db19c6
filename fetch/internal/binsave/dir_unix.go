//go:build unix

package binsave

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

func dirPath(tmp string) string {
	return filepath.Join(tmp, DirPrefix+"-"+strconv.Itoa(os.Getuid()))
}

// checkDir verifies dir through a handle opened without following links.
// A directory Dir has just created gets mode 0700 exactly, whatever the
// umask made of it.
func checkDir(dir string, created bool) error {
	if fi, err := os.Lstat(dir); err != nil {
		return newErr(Internal, CodeDirFailed, "cannot inspect the download directory "+dir+": "+err.Error(), err)
	} else if fi.Mode()&os.ModeSymlink != 0 {
		return unsafeDir(dir, "it is a symbolic link", nil)
	} else if !fi.IsDir() {
		return unsafeDir(dir, "it is not a directory", nil)
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return unsafeDir(dir, "it cannot be opened as a directory without following links ("+err.Error()+")", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return newErr(Internal, CodeDirFailed, "cannot inspect the download directory "+dir+": "+err.Error(), err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return unsafeDir(dir, "its owner cannot be read", nil)
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return unsafeDir(dir, fmt.Sprintf("it is owned by uid %d, not by the current user (uid %d)", st.Uid, uid), nil)
	}
	if created && fi.Mode().Perm() != 0o700 {
		if err := f.Chmod(0o700); err != nil {
			return newErr(Internal, CodeDirFailed, "cannot set the mode of the download directory "+dir+": "+err.Error(), err)
		}
		return nil
	}
	if m := fi.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky); m != 0o700 {
		return unsafeDir(dir, fmt.Sprintf("its mode is %04o, not 0700", uint32(m.Perm())|modeHigh(m)), nil)
	}
	return nil
}

// modeHigh renders the setuid, setgid and sticky bits in octal.
func modeHigh(m os.FileMode) uint32 {
	var v uint32
	if m&os.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		v |= 0o1000
	}
	return v
}
