//go:build integration

package browser

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// shown is one piece of text the page shows: a visible text node, or the
// title, aria-label or placeholder of a visible element.
type shown struct {
	Text  string `json:"text"`
	Where string `json:"where"`
}

// shownTextJS lists what the page shows. A text node counts when its element
// is rendered (checkVisibility: not display:none, not hidden, not
// visibility:hidden, not transparent) and has a box; an option counts when
// its select does. Closed dialogs and hidden panels are left out.
const shownTextJS = `(() => {
  const vis = (el) => !!el && el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) && el.getClientRects().length > 0;
  const where = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  const out = [{ text: document.title, where: 'title' }];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const text = n.nodeValue.trim();
    if (!text) continue;
    const el = n.parentElement;
    if (!el || ['SCRIPT', 'STYLE', 'TEMPLATE'].includes(el.tagName)) continue;
    if (!vis(el.tagName === 'OPTION' ? el.closest('select') : el)) continue;
    out.push({ text, where: where(el) });
  }
  for (const el of document.querySelectorAll('[title], [aria-label], [placeholder]')) {
    if (!vis(el)) continue;
    for (const a of ['title', 'aria-label', 'placeholder']) {
      const v = el.getAttribute(a);
      if (v && v.trim()) out.push({ text: v.trim(), where: where(el) + '@' + a });
    }
  }
  return out;
})()`

// placeholder is a {name} in a dictionary string.
var placeholder = regexp.MustCompile(`\{[A-Za-z_][A-Za-z0-9_]*\}`)

// placeholderValue matches what the page puts in a placeholder: an amount
// ("R$ 10,00"), a multiplier, a hash, a count: one or two words.
const placeholderValue = `\S+(?: \S+)?`

// untranslated finds, in a page meant to be in the target language, English
// dictionary strings and raw dictionary keys.
type untranslated struct {
	english []englishString
	rawKey  *regexp.Regexp
}

type englishString struct {
	key, text string
	re        *regexp.Regexp
}

// newUntranslated prepares the check from the English dictionary and the
// target one. An English string counts only where the target translation
// differs, where no target string is that same text, and where it has at least
// two letters besides its placeholders ("{pct}%" tells nothing). A string with
// placeholders matches with a short value in their place ("Bet {amount}"
// matches "Bet R$10.00").
func newUntranslated(en, target map[string]string) *untranslated {
	targetTexts := map[string]bool{}
	for _, v := range target {
		targetTexts[normalize(v)] = true
	}
	u := &untranslated{}
	prefixes := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(en)) {
		if i := strings.IndexByte(k, '.'); i > 0 {
			prefixes[regexp.QuoteMeta(k[:i])] = true
		}
		e := normalize(en[k])
		tr, ok := target[k]
		if !ok || normalize(tr) == e || targetTexts[e] || letters(placeholder.ReplaceAllString(e, "")) < 2 {
			continue
		}
		parts := placeholder.Split(e, -1)
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		u.english = append(u.english, englishString{key: k, text: e, re: regexp.MustCompile(`^` + strings.Join(parts, placeholderValue) + `$`)})
	}
	u.rawKey = regexp.MustCompile(`(?:^|\s)(?:` + strings.Join(slices.Sorted(maps.Keys(prefixes)), "|") + `)\.[A-Za-z][A-Za-z0-9_]*(?:$|\s)`)
	return u
}

// find returns one line per offending piece of text.
func (u *untranslated) find(items []shown) []string {
	var bad []string
	for _, it := range items {
		text := normalize(it.Text)
		if u.rawKey.MatchString(text) {
			bad = append(bad, fmt.Sprintf("%s shows the raw key %q", it.Where, text))
			continue
		}
		if m := placeholder.FindString(text); m != "" {
			bad = append(bad, fmt.Sprintf("%s shows an unfilled placeholder %s in %q", it.Where, m, text))
			continue
		}
		for _, e := range u.english {
			if e.re.MatchString(text) {
				bad = append(bad, fmt.Sprintf("%s shows %q: the English %s (%q)", it.Where, text, e.key, e.text))
				break
			}
		}
	}
	return bad
}

// missingKeys lists the keys of en that target lacks.
func missingKeys(en, target map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(en)) {
		if _, ok := target[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

func letters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}

// fetchDictionary reads a dictionary as the game serves it to the page.
func fetchDictionary(ctx context.Context, gameURL, lang string) (map[string]string, error) {
	var d map[string]string
	if err := getJSON(ctx, gameURL+"/static/i18n/"+lang+".json", "", &d); err != nil {
		return nil, err
	}
	if len(d) == 0 {
		return nil, fmt.Errorf("the %s dictionary is empty", lang)
	}
	return d, nil
}
