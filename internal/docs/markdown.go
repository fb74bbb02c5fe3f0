package docs

import (
	"html/template"
	"regexp"
	"strings"
)

// markdown renders, with "##" as the heading level headingBase, the
// CommonMark subset that the documents' descriptions
// use: paragraphs, headings, bullet and numbered lists, pipe tables, fenced
// code, `code` and **bold**. Everything else is shown as the text it is.
// Every piece of the source is HTML-escaped before a tag is put around it.
func markdown(src string, headingBase int) template.HTML {
	lines := strings.Split(strings.ReplaceAll(strings.TrimSpace(src), "\r\n", "\n"), "\n")
	var b strings.Builder
	for i := 0; i < len(lines); {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			i++
		case strings.HasPrefix(trimmed, "```"):
			i++
			var code []string
			for i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```") {
				code = append(code, lines[i])
				i++
			}
			i++ // the closing fence
			b.WriteString("<pre>" + template.HTMLEscapeString(strings.Join(code, "\n")) + "</pre>\n")
		case headingRE.MatchString(line):
			m := headingRE.FindStringSubmatch(line)
			level := min(max(len(m[1])-2+headingBase, 2), 6) // "##" is headingBase
			tag := string(rune('0' + level))
			b.WriteString("<h" + tag + ">" + inline(m[2]) + "</h" + tag + ">\n")
			i++
		case strings.HasPrefix(trimmed, "|") && i+1 < len(lines) && tableRuleRE.MatchString(lines[i+1]):
			i = writeTable(&b, lines, i)
		case itemRE.MatchString(line):
			i = writeList(&b, lines, i)
		default:
			var para []string
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" && !startsBlock(lines, i) {
				para = append(para, strings.TrimSpace(lines[i]))
				i++
			}
			if len(para) == 0 { // a block start the cases above did not take
				para = append(para, trimmed)
				i++
			}
			b.WriteString("<p>" + inline(strings.Join(para, "\n")) + "</p>\n")
		}
	}
	return markup(b.String())
}

// inlineHTML is inline as HTML, for a one-line text (a summary).
func inlineHTML(s string) template.HTML { return markup(inline(s)) }

// markup marks as HTML a string that the renderer built: every piece of a
// document in it went through template.HTMLEscapeString, and the tags
// around them are the renderer's own. It is the only such conversion.
func markup(built string) template.HTML {
	return template.HTML(built) //nolint:gosec // G203: built from escaped pieces only, see above
}

var (
	headingRE   = regexp.MustCompile(`^\s*(#{1,6})\s+(.*)$`)
	itemRE      = regexp.MustCompile(`^(\s*)([-*+]|\d+\.)\s+(.*)$`)
	tableRuleRE = regexp.MustCompile(`^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$`)
	boldRE      = regexp.MustCompile(`\*\*([^*\n]+)\*\*`)
)

// startsBlock reports whether lines[i] begins a block other than a paragraph.
func startsBlock(lines []string, i int) bool {
	t := strings.TrimSpace(lines[i])
	return strings.HasPrefix(t, "```") || headingRE.MatchString(lines[i]) || itemRE.MatchString(lines[i]) ||
		(strings.HasPrefix(t, "|") && i+1 < len(lines) && tableRuleRE.MatchString(lines[i+1]))
}

// writeList writes the list that starts at lines[i] and returns the index of
// the first line after it. A line indented under an item continues it, also
// after a blank line; a nested item becomes an item of its own.
func writeList(b *strings.Builder, lines []string, i int) int {
	ordered := strings.HasSuffix(itemRE.FindStringSubmatch(lines[i])[2], ".")
	tag := "ul"
	if ordered {
		tag = "ol"
	}
	b.WriteString("<" + tag + ">\n")
	var item []string
	flush := func() {
		if item != nil {
			b.WriteString("<li>" + inline(strings.Join(item, "\n")) + "</li>\n")
		}
		item = nil
	}
	for i < len(lines) {
		line := lines[i]
		if m := itemRE.FindStringSubmatch(line); m != nil && (m[1] != "" || sameKind(line, ordered)) {
			flush()
			item = []string{m[3]}
			i++
			continue
		}
		if strings.TrimSpace(line) == "" {
			// The list goes on if the next line is indented or is an item
			// of the same kind.
			if i+1 < len(lines) && (sameKind(lines[i+1], ordered) || indented(lines[i+1])) {
				i++
				continue
			}
			break
		}
		if !indented(line) {
			break
		}
		item = append(item, strings.TrimSpace(line))
		i++
	}
	flush()
	b.WriteString("</" + tag + ">\n")
	return i
}

// sameKind reports whether line is an item of a numbered list (ordered) or
// of a bullet list.
func sameKind(line string, ordered bool) bool {
	m := itemRE.FindStringSubmatch(line)
	return m != nil && strings.HasSuffix(m[2], ".") == ordered
}

func indented(line string) bool {
	return strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
}

// writeTable writes the pipe table whose header is lines[i].
func writeTable(b *strings.Builder, lines []string, i int) int {
	b.WriteString("<table>\n<thead><tr>")
	for _, c := range cells(lines[i]) {
		b.WriteString("<th>" + inline(c) + "</th>")
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	i += 2
	for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|") {
		b.WriteString("<tr>")
		for _, c := range cells(lines[i]) {
			b.WriteString("<td>" + inline(c) + "</td>")
		}
		b.WriteString("</tr>\n")
		i++
	}
	b.WriteString("</tbody>\n</table>\n")
	return i
}

func cells(line string) []string {
	t := strings.TrimSpace(line)
	t = strings.TrimPrefix(t, "|")
	t = strings.TrimSuffix(t, "|")
	parts := strings.Split(t, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// inline escapes s and marks up its `code` spans and **bold** runs.
func inline(s string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(s, '`')
		if open < 0 {
			break
		}
		end := strings.IndexByte(s[open+1:], '`')
		if end < 0 {
			break
		}
		b.WriteString(bold(template.HTMLEscapeString(s[:open])))
		b.WriteString("<code>" + template.HTMLEscapeString(s[open+1:open+1+end]) + "</code>")
		s = s[open+1+end+1:]
	}
	b.WriteString(bold(template.HTMLEscapeString(s)))
	return b.String()
}

// bold marks up **bold** in already escaped text (escaping leaves * alone).
func bold(escaped string) string {
	return boldRE.ReplaceAllString(escaped, "<strong>$1</strong>")
}
