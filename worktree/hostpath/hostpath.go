// Package hostpath implements Node's path module semantics for the two host
// flavors, posix and win32, so that paths sent by a host on any platform are
// made absolute exactly as the host itself would make them.
package hostpath

// CONTRACT NOTE (remove when implemented).

// Flavor selects posix or win32 path rules.
type Flavor int

const (
	Native Flavor = iota // the flavor of the running OS
	Posix
	Win32
)

// ForPlatform maps Node's process.platform to a flavor: win32 for "win32",
// posix for anything else.
func ForPlatform(platform string) Flavor {
	if platform == "win32" {
		return Win32
	}
	return Posix
}

// Methods to implement (Node semantics, explicit cwd instead of process.cwd()):
//	func (f Flavor) Resolve(cwd string, elems ...string) string // path.resolve
//	func (f Flavor) Join(elems ...string) string                  // path.join
//	func (f Flavor) Normalize(p string) string                    // path.normalize
//	func (f Flavor) IsAbs(p string) bool                          // path.isAbsolute
//	func (f Flavor) Relative(from, to string) string              // path.relative (cwd needed for relative inputs)
//	func (f Flavor) Dir(p string) string                          // path.dirname
//	func (f Flavor) Base(p string) string                         // path.basename
//	func (f Flavor) Sep() string
