package s3sync

import (
	"fmt"
	"path"
	"strings"
)

// matcher holds --exclude patterns. A pattern excludes a file when it matches, with
// path.Match syntax plus `**` for any number of directories:
//   - the file's slash-separated path relative to the sync root ("logs/*.txt"),
//   - or its base name ("*.tmp", anywhere),
//   - or one of its parent directories' paths or names (".git" excludes .git/config).
type matcher struct {
	patterns [][]string // split on "/"
}

func newMatcher(patterns []string) (*matcher, error) {
	m := &matcher{}
	for _, p := range patterns {
		p = strings.Trim(p, "/")
		if p == "" {
			continue
		}
		segs := strings.Split(p, "/")
		for _, s := range segs {
			if _, err := path.Match(s, ""); err != nil {
				return nil, fmt.Errorf("exclude pattern %q: %w", p, err)
			}
		}
		m.patterns = append(m.patterns, segs)
	}
	return m, nil
}

// excluded reports whether rel (slash-separated, relative) or one of its parents matches.
func (m *matcher) excluded(rel string) bool {
	if m == nil || len(m.patterns) == 0 {
		return false
	}
	segs := strings.Split(rel, "/")
	for i := len(segs); i > 0; i-- {
		if m.matchOne(segs[:i]) {
			return true
		}
	}
	return false
}

// matchOne matches one path (file or directory) against every pattern, whole or by name.
func (m *matcher) matchOne(segs []string) bool {
	base := segs[len(segs)-1:]
	for _, p := range m.patterns {
		if matchSegs(p, segs) || (len(p) == 1 && matchSegs(p, base)) {
			return true
		}
	}
	return false
}

// matchSegs matches path segments against pattern segments, `**` matching zero or more.
func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(segs); i++ {
				if matchSegs(rest, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
