package format

// extname is Node's path.extname for posix paths, the extension the host
// matches formatters by: from the last dot of the last component to its
// end, "" when that component has no dot, starts with its only dots
// (".bashrc"), or is "..". A trailing slash is ignored. "a." gives ".".
func extname(path string) string {
	startDot, startPart, end := -1, 0, -1
	matchedSlash := true
	// preDotState: 0 while no other character was seen before the dot, 1
	// after more dots, -1 after another character.
	preDotState := 0
	for i := len(path) - 1; i >= 0; i-- {
		c := path[i]
		if c == '/' {
			if !matchedSlash {
				startPart = i + 1
				break
			}
			continue
		}
		if end == -1 {
			matchedSlash = false
			end = i + 1
		}
		if c == '.' {
			if startDot == -1 {
				startDot = i
			} else if preDotState != 1 {
				preDotState = 1
			}
		} else if startDot != -1 {
			preDotState = -1
		}
	}
	if startDot == -1 || end == -1 || preDotState == 0 ||
		(preDotState == 1 && startDot == end-1 && startDot == startPart+1) {
		return ""
	}
	return path[startDot:end]
}
