package hostpath

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// isWinDeviceName reports whether name (upper case) is one of the DOS
// device names Node treats specially when they precede a colon
// (CVE-2025-27210 hardening in Node's normalize). A switch, not a map, so
// nothing is built when the program starts.
func isWinDeviceName(name string) bool {
	switch name {
	case "CON", "PRN", "AUX", "NUL",
		"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
		"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
		"COM\u00b9", "COM\u00b2", "COM\u00b3",
		"LPT\u00b9", "LPT\u00b2", "LPT\u00b3":
		return true
	}
	return false
}

// isWinReservedName mirrors Node's isWindowsReservedName(path, colonIndex),
// including its behaviour for colonIndex == -1 (slice(0, -1) drops the last
// UTF-16 unit).
func isWinReservedName(p string, colonIndex int) bool {
	var part string
	if colonIndex >= 0 {
		part = p[:colonIndex]
	} else {
		if p == "" {
			return false
		}
		r, size := utf8.DecodeLastRuneInString(p)
		if r > 0xFFFF {
			return false // a lone high surrogate would remain: never a name
		}
		part = p[:len(p)-size]
	}
	return isWinDeviceName(strings.ToUpper(part))
}

// winRootInfo is a UNC or device root found at the start of a path the way
// Node's resolve and normalize find it (winParseUNC): the device, where the
// root ends, and (for normalize) whether the path is a bare UNC root.
type winRootInfo struct {
	device    string
	hasDevice bool
	rootEnd   int
	uncOnly   bool // "\\server\share" and nothing else (j == len)
	firstPart string
	shareRest string
}

// uncRoot scans "\\server\share" at the start of p, which begins with two
// separators, as Node does: where the server name ends, where the share
// name begins and ends, and whether both are there.
func uncRoot(p string) (serverEnd, shareStart, shareEnd int, ok bool) {
	n := len(p)
	j := 2
	for j < n && !isWinSep(p[j]) {
		j++
	}
	if j == n || j == 2 {
		return 0, 0, 0, false
	}
	serverEnd = j
	for j < n && isWinSep(p[j]) {
		j++
	}
	if j == n || j == serverEnd {
		return 0, 0, 0, false
	}
	shareStart = j
	for j < n && !isWinSep(p[j]) {
		j++
	}
	return serverEnd, shareStart, j, true
}

func winParseUNC(p string) (info winRootInfo) {
	serverEnd, shareStart, j, ok := uncRoot(p)
	if !ok {
		return info
	}
	first := p[2:serverEnd]
	info.firstPart = first
	info.hasDevice = true
	if first == "." || first == "?" {
		info.device = `\\` + first
		info.rootEnd = 4
		return info
	}
	info.device = `\\` + first + `\` + p[shareStart:j]
	info.rootEnd = j
	info.uncOnly = j == len(p)
	info.shareRest = p[shareStart:]
	return info
}

func winResolve(cwd string, elems []string) string {
	resolvedDevice := ""
	resolvedTail := ""
	resolvedAbs := false
	for i := len(elems) - 1; i >= -1; i-- {
		var p string
		if i >= 0 {
			p = elems[i]
			if p == "" {
				continue
			}
		} else if resolvedDevice == "" {
			p = cwd
		} else {
			// Node reads the drive's own cwd from the environment variable
			// "=X:"; there is none here, so it falls back to cwd and checks
			// that cwd is on the same drive.
			p = cwd
			if !(len(p) >= 2 && strings.EqualFold(p[:2], resolvedDevice)) && len(p) > 2 && p[2] == '\\' {
				p = resolvedDevice + `\`
			}
		}
		n := len(p)
		rootEnd := 0
		device := ""
		abs := false
		if n == 0 {
			// An empty cwd contributes nothing.
		} else if n == 1 {
			if isWinSep(p[0]) {
				rootEnd = 1
				abs = true
			}
		} else if isWinSep(p[0]) {
			abs = true
			if isWinSep(p[1]) {
				info := winParseUNC(p)
				if info.hasDevice {
					device = info.device
					rootEnd = info.rootEnd
				}
			} else {
				rootEnd = 1
			}
		} else if isDriveLetter(p[0]) && p[1] == ':' {
			device = p[:2]
			rootEnd = 2
			if n > 2 && isWinSep(p[2]) {
				abs = true
				rootEnd = 3
			}
		}
		if device != "" {
			if resolvedDevice != "" {
				if jsLower(device) != jsLower(resolvedDevice) {
					continue
				}
			} else {
				resolvedDevice = device
			}
		}
		if resolvedAbs {
			if resolvedDevice != "" {
				break
			}
		} else {
			resolvedTail = p[rootEnd:] + `\` + resolvedTail
			resolvedAbs = abs
			if abs && resolvedDevice != "" {
				break
			}
		}
	}
	resolvedTail = normalizeString(resolvedTail, !resolvedAbs, '\\', isWinSep)
	if resolvedAbs {
		return resolvedDevice + `\` + resolvedTail
	}
	if s := resolvedDevice + resolvedTail; s != "" {
		return s
	}
	return "."
}

func winNormalize(p string) string {
	n := len(p)
	if n == 0 {
		return "."
	}
	rootEnd := 0
	device := ""
	hasDevice := false
	abs := false
	if n == 1 {
		if p[0] == '/' {
			return `\`
		}
		return p
	}
	if isWinSep(p[0]) {
		abs = true
		if isWinSep(p[1]) {
			info := winParseUNC(p)
			if info.hasDevice {
				if info.uncOnly && info.firstPart != "." && info.firstPart != "?" {
					return `\\` + info.firstPart + `\` + info.shareRest + `\`
				}
				device, hasDevice, rootEnd = info.device, true, info.rootEnd
			}
		} else {
			rootEnd = 1
		}
	} else {
		colon := strings.IndexByte(p, ':')
		if colon > 0 {
			if isDriveLetter(p[0]) && colon == 1 {
				device, hasDevice, rootEnd = p[:2], true, 2
				if n > 2 && isWinSep(p[2]) {
					abs = true
					rootEnd = 3
				}
			} else if isWinReservedName(p, colon) {
				device, hasDevice, rootEnd = p[:colon+1], true, colon+1
			}
		}
	}
	tail := ""
	if rootEnd < n {
		tail = normalizeString(p[rootEnd:], !abs, '\\', isWinSep)
	}
	if tail == "" && !abs {
		tail = "."
	}
	if tail != "" && isWinSep(p[n-1]) {
		tail += `\`
	}
	if !abs && !hasDevice && strings.IndexByte(p, ':') >= 0 {
		// Keep a relative result from reading as a drive path (Node's
		// CVE-2024-36139 fix).
		if len(tail) >= 2 && isDriveLetter(tail[0]) && tail[1] == ':' {
			return `.\` + tail
		}
		for idx := strings.IndexByte(p, ':'); idx != -1; {
			if idx == n-1 || isWinSep(p[idx+1]) {
				return `.\` + tail
			}
			next := strings.IndexByte(p[idx+1:], ':')
			if next < 0 {
				break
			}
			idx += 1 + next
		}
	}
	if isWinReservedName(p, strings.IndexByte(p, ':')) {
		return `.\` + device + tail
	}
	if !hasDevice {
		if abs {
			return `\` + tail
		}
		return tail
	}
	if abs {
		return device + `\` + tail
	}
	return device + tail
}

func winIsAbs(p string) bool {
	if p == "" {
		return false
	}
	return isWinSep(p[0]) || (len(p) > 2 && isDriveLetter(p[0]) && p[1] == ':' && isWinSep(p[2]))
}

func winJoin(elems []string) string {
	joined := ""
	first := ""
	have := false
	for _, e := range elems {
		if e == "" {
			continue
		}
		if !have {
			joined, first, have = e, e, true
		} else {
			joined += `\` + e
		}
	}
	if !have {
		return "."
	}
	needsReplace := true
	slashCount := 0
	if isWinSep(first[0]) {
		slashCount++
		if len(first) > 1 && isWinSep(first[1]) {
			slashCount++
			if len(first) > 2 {
				if isWinSep(first[2]) {
					slashCount++
				} else {
					needsReplace = false
				}
			}
		}
	}
	if needsReplace {
		for slashCount < len(joined) && isWinSep(joined[slashCount]) {
			slashCount++
		}
		if slashCount >= 2 {
			joined = `\` + joined[slashCount:]
		}
	}
	return winNormalize(joined)
}

// jsLower lower-cases like JavaScript's String.prototype.toLowerCase for
// the cases that matter to path comparison (İ becomes "i̇"); final-sigma
// context rules are not applied.
func jsLower(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range s {
		if r == '\u0130' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func winRelative(cwd, from, to string) string {
	if from == to {
		return ""
	}
	fromOrig := winResolve(cwd, []string{from})
	toOrig := winResolve(cwd, []string{to})
	if fromOrig == toOrig {
		return ""
	}
	if (isASCII(fromOrig) && isASCII(toOrig)) || !utf8.ValidString(fromOrig) || !utf8.ValidString(toOrig) {
		// ASCII, or bytes that are not UTF-8 (Node has no such strings):
		// work on bytes, lower-casing ASCII letters only.
		return winRelativeUnits(asciiUnits(fromOrig), asciiUnits(toOrig), asciiUnits(asciiLower(fromOrig)), asciiUnits(asciiLower(toOrig)), bytesString)
	}
	fo := utf16.Encode([]rune(fromOrig))
	to16 := utf16.Encode([]rune(toOrig))
	fl := utf16.Encode([]rune(jsLower(fromOrig)))
	tl := utf16.Encode([]rune(jsLower(toOrig)))
	return winRelativeUnits(fo, to16, fl, tl, unitsString)
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// asciiUnits widens each byte to a unit; unitsString narrows back only for
// ASCII, so byte strings are carried through unchanged.
func asciiUnits(s string) []uint16 {
	u := make([]uint16, len(s))
	for i := 0; i < len(s); i++ {
		u[i] = uint16(s[i])
	}
	return u
}

func unitsString(u []uint16) string { return string(utf16.Decode(u)) }

// bytesString narrows units made by asciiUnits back to the original bytes.
func bytesString(u []uint16) string {
	b := make([]byte, len(u))
	for i, c := range u {
		b[i] = byte(c)
	}
	return string(b)
}

func unitsEqual(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// winRelativeUnits is the body of Node's win32.relative on UTF-16 code
// units, since Node's index arithmetic is in those units.
func winRelativeUnits(fromOrig, toOrig, from, to []uint16, unitsString func([]uint16) string) string {
	const bs = '\\'
	if unitsEqual(from, to) {
		return ""
	}
	if len(fromOrig) != len(from) || len(toOrig) != len(to) {
		fromSplit := splitUnits(fromOrig)
		toSplit := splitUnits(toOrig)
		if len(fromSplit[len(fromSplit)-1]) == 0 {
			fromSplit = fromSplit[:len(fromSplit)-1]
		}
		if len(toSplit[len(toSplit)-1]) == 0 {
			toSplit = toSplit[:len(toSplit)-1]
		}
		fromLen, toLen := len(fromSplit), len(toSplit)
		length := min(fromLen, toLen)
		i := 0
		for ; i < length; i++ {
			if jsLower(unitsString(fromSplit[i])) != jsLower(unitsString(toSplit[i])) {
				break
			}
		}
		if i == 0 {
			return unitsString(toOrig)
		} else if i == length {
			if toLen > length {
				return joinUnits(toSplit[i:], unitsString)
			}
			if fromLen > length {
				return strings.Repeat(`..\`, fromLen-1-i) + ".."
			}
			return ""
		}
		return strings.Repeat(`..\`, fromLen-i) + joinUnits(toSplit[i:], unitsString)
	}
	fromStart, fromEnd := trimBackslashes(from)
	fromLen := fromEnd - fromStart
	toStart, toEnd := trimBackslashes(to)
	toLen := toEnd - toStart
	length := min(fromLen, toLen)
	lastCommonSep := -1
	i := 0
	for ; i < length; i++ {
		c := from[fromStart+i]
		if c != to[toStart+i] {
			break
		} else if c == bs {
			lastCommonSep = i
		}
	}
	if i != length {
		if lastCommonSep == -1 {
			return unitsString(toOrig)
		}
	} else {
		if toLen > length {
			if to[toStart+i] == bs {
				return unitsString(toOrig[toStart+i+1:])
			}
			if i == 2 {
				return unitsString(toOrig[toStart+i:])
			}
		}
		if fromLen > length {
			if from[fromStart+i] == bs {
				lastCommonSep = i
			} else if i == 2 {
				lastCommonSep = 3
			}
		}
		if lastCommonSep == -1 {
			lastCommonSep = 0
		}
	}
	var out strings.Builder
	for i = fromStart + lastCommonSep + 1; i <= fromEnd; i++ {
		if i == fromEnd || from[i] == bs {
			if out.Len() == 0 {
				out.WriteString("..")
			} else {
				out.WriteString(`\..`)
			}
		}
	}
	toStart += lastCommonSep
	if out.Len() > 0 {
		return out.String() + unitsString(sliceUnits(toOrig, toStart, toEnd))
	}
	if toStart < len(toOrig) && toOrig[toStart] == bs {
		toStart++
	}
	return unitsString(sliceUnits(toOrig, toStart, toEnd))
}

// trimBackslashes returns the bounds of u without its leading backslashes
// and without its trailing ones, keeping at least one unit after start, as
// Node's win32.relative trims both of its operands.
func trimBackslashes(u []uint16) (start, end int) {
	for start < len(u) && u[start] == '\\' {
		start++
	}
	end = len(u)
	for end-1 > start && u[end-1] == '\\' {
		end--
	}
	return start, end
}

// sliceUnits is JavaScript's slice(start, end) with clamping.
func sliceUnits(u []uint16, start, end int) []uint16 {
	start = max(0, min(start, len(u)))
	end = max(0, min(end, len(u)))
	if start >= end {
		return nil
	}
	return u[start:end]
}

func splitUnits(u []uint16) [][]uint16 {
	var parts [][]uint16
	last := 0
	for i, c := range u {
		if c == '\\' {
			parts = append(parts, u[last:i])
			last = i + 1
		}
	}
	return append(parts, u[last:])
}

func joinUnits(parts [][]uint16, unitsString func([]uint16) string) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = unitsString(p)
	}
	return strings.Join(s, `\`)
}
