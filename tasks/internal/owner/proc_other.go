//go:build !linux

package owner

// system is a process table that is not there: without /proc this package
// cannot read a process's start time or the boot id, so Self records
// neither and Alive answers unknown for every identity.
func system() procTable { return procTable{host: hostname()} }

// vanished: only Linux reports a process that exited mid-read this way.
func vanished(error) bool { return false }
