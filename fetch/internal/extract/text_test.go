package extract

import (
	"testing"
)

func TestRenderText(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"white space in text collapses", "<p>  one\n\t two   three </p>", "one two three"},
		{"inline elements join without extra space", "<p>a<b>b</b>c <i>d</i> e</p>", "abc d e"},
		{"blocks are separated by one blank line", "<div>a</div><div><p>b</p></div><section><h2>c</h2></section>", "a\n\nb\n\nc"},
		{"list items get a dash on their own line", "<p>intro</p><ul><li>one</li><li>two <b>bold</b></li></ul><p>after</p>", "intro\n\n- one\n- two bold\n\nafter"},
		{"nested lists", "<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>", "- a\n- b\n- c"},
		{"br is a line break", "<p>line one<br>line two<br/><br>line four</p>", "line one\nline two\nline four"},
		{"pre is kept verbatim", "<p>x</p><pre>  a  b\n\n\n\tc </pre><p>y</p>", "x\n\n  a  b\n\n\n\tc \n\ny"},
		{"pre text ending in a newline gets one blank line", "<pre>code\n</pre><p>y</p>", "code\n\ny"},
		{"script, style, noscript and template are skipped", "<p>a</p><script>var x</script><style>p{}</style><noscript>enable</noscript><template><p>t</p></template><p>b</p>", "a\n\nb"},
		{"table cells are blocks", "<table><tr><th>k</th><td>v</td></tr></table>", "k\n\nv"},
		{"nothing but space", "<p> </p><div>\n</div>", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := parse("<html><body>" + tc.body + "</body></html>")
			if got := renderText(doc); got != tc.want {
				t.Errorf("renderText\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\n\n\n\n\nb", "a\n\nb"},
		{"a\n\nb", "a\n\nb"},
		{"a\n \nb", "a\n \nb"},
		{"a\n \n\t\n\nb", "a\n\nb"},
		{"a\r\n\r\n\r\nb\rc", "a\n\nb\nc"},
		{"\n\n  a  \n\n", "a"},
	}
	for _, tc := range tests {
		if got := cleanText(tc.in); got != tc.want {
			t.Errorf("cleanText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
