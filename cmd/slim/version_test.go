package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "70474874bf688d0665f9d7f1969cbad2865e44b1"},
		{Key: "vcs.modified", Value: "false"},
	}
	tests := []struct {
		name                    string
		version, commit         string
		main                    string
		settings                []debug.BuildSetting
		wantVersion, wantCommit string
	}{
		{"linker values win", "v0.1.0", "abc1234", "v0.0.0-20261201192949-70474874bf68", vcs, "v0.1.0", "abc1234"},
		{"go install of a tag has no revision", "dev", "none", "v0.2.0", nil, "v0.2.0", "none"},
		{"build in a git checkout", "dev", "none", "v0.0.0-20261201192949-70474874bf68", vcs, "v0.0.0-20261201192949-70474874bf68", "70474874bf68"},
		{"no version and no VCS information", "dev", "none", "(devel)", nil, "dev", "none"},
		{"a devel build still reports its revision", "dev", "none", "(devel)", vcs, "dev", "70474874bf68"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/slimgate/slim", Version: tt.main}, Settings: tt.settings}
			v, c := fromBuildInfo(tt.version, tt.commit, info)
			if v != tt.wantVersion || c != tt.wantCommit {
				t.Errorf("fromBuildInfo = %q, %q; want %q, %q", v, c, tt.wantVersion, tt.wantCommit)
			}
		})
	}
}
