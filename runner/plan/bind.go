package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/runall/runall/internal/lazyre"
	"mvdan.cc/sh/v3/syntax"
)

// A value a sampler hands out (search:'s ask) comes from outside the task file: it is data,
// never code. It is never pasted into a command. Each trial's commands get its params in
// variables (ParamVar), and a placeholder in a command becomes a reference to its variable,
// quoted for where it stands, so that whatever the value holds (; $(...) ` ' ") the shell
// only ever reads it as one word of text:
//
//	--lr <lr>        → --lr "${RUNALL_PARAM_lr}"
//	"lr=<lr>"        → "lr=${RUNALL_PARAM_lr}"
//	'lr=<lr>'        → 'lr='"${RUNALL_PARAM_lr}"''
//	$((<n> * 2))     → the value itself, which must be a number: bash evaluates a variable
//	                   in arithmetic as an expression, and an expression can run a command
//
// Where the shell cannot take a value as data (a quoted here-document, after a backslash)
// the placeholder is an error. A command that hands the value to an interpreter itself
// (eval "<x>", python -c "<x>") makes it code by its own choice.

// ParamVar is the variable a trial's param is handed to its commands in: RUNALL_PARAM_ and
// its name, each character that cannot be in a variable name written as _.
func ParamVar(name string) string {
	b := []byte("RUNALL_PARAM_" + name)
	for i := len("RUNALL_PARAM_"); i < len(b); i++ {
		if c := b[i]; !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// quoting is where a placeholder stands in a command.
type quoting int

const (
	unquoted  quoting = iota
	inDouble          // "...", or an unquoted here-document
	inSingle          // '...'
	inANSI            // $'...'
	inArith           // $((...)), ((...)), let, an index, [[ -eq ]]
	inLiteral         // a quoted here-document: no expansion at all
)

// bindCommand is cmd with each placeholder of params replaced as above.
func bindCommand(cmd string, params []Param) (string, error) {
	marked, marks := markPlaceholders(cmd, params)
	if len(marks) == 0 {
		return cmd, nil
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(marked), "")
	if err != nil {
		return "", fmt.Errorf("cmd: cannot read it as a bash command to put the params in safely: %w", err)
	}
	where, err := placeholderQuoting(f, marks)
	if err != nil {
		return "", err
	}
	pairs := make([]string, 0, 2*len(marks))
	for m, p := range marks {
		if !slices.Contains(params, p) {
			pairs = append(pairs, m, "<"+p.Name+">") // not a param: as it was
			continue
		}
		text, err := reference(p, where[m])
		if err != nil {
			return "", err
		}
		pairs = append(pairs, m, text)
	}
	return strings.NewReplacer(pairs...).Replace(marked), nil
}

// markPlaceholders replaces each placeholder in cmd with a word of its own (a marker that cmd
// does not hold), which the parser reads as plain text: <lr> would be read as a
// redirection. A placeholder of params maps to its param; any other <name> to a param of that
// name and no value.
func markPlaceholders(cmd string, params []Param) (string, map[string]Param) {
	for _, m := range placeholderRE.FindAllStringSubmatch(cmd, -1) {
		if !slices.ContainsFunc(params, func(p Param) bool { return p.Name == m[1] }) {
			params = append(slices.Clip(params), Param{Name: m[1]})
		}
	}
	sum := sha256.Sum256([]byte(cmd))
	nonce := "RUNALLP" + hex.EncodeToString(sum[:6])
	marks := map[string]Param{}
	var b strings.Builder
	for i := 0; i < len(cmd); {
		p, ok := placeholderAt(cmd[i:], params)
		if !ok {
			b.WriteByte(cmd[i])
			i++
			continue
		}
		m := fmt.Sprintf("%sx%dx", nonce, len(marks))
		marks[m] = p
		b.WriteString(m)
		i += len(p.Name) + 2
	}
	return b.String(), marks
}

// placeholderAt is the param whose placeholder s starts with.
func placeholderAt(s string, params []Param) (Param, bool) {
	if s[0] != '<' {
		return Param{}, false
	}
	for _, p := range params {
		if strings.HasPrefix(s[1:], p.Name) && strings.HasPrefix(s[1+len(p.Name):], ">") {
			return p, true
		}
	}
	return Param{}, false
}

// reference is what stands for p's value where it is quoted so.
func reference(p Param, q quoting) (string, error) {
	v := "${" + ParamVar(p.Name) + "}"
	switch q {
	case inDouble:
		return v, nil
	case inSingle:
		return `'"` + v + `"'`, nil
	case inANSI:
		return `'"` + v + `"$'`, nil
	case inArith:
		if !plainNumber(p.Value) {
			return "", fmt.Errorf("param %s = %q is used in an arithmetic expression, where bash would run it as code: only a number can go there", p.Name, p.Value)
		}
		return p.Value, nil
	case inLiteral:
		return "", fmt.Errorf("param %s is in a quoted here-document, where no value can be put as data: leave the delimiter unquoted (<<EOF), or read $%s", p.Name, ParamVar(p.Name))
	}
	return `"` + v + `"`, nil
}

// plainNumber reports whether s is a decimal number and nothing else.
func plainNumber(s string) bool {
	digits := 0
	for i, c := range s {
		switch {
		case '0' <= c && c <= '9':
			digits++
		case (c == '-' || c == '+') && i == 0, c == '.':
		default:
			return false
		}
	}
	return digits > 0
}

// placeholderQuoting says where each marker stands in f.
func placeholderQuoting(f *syntax.File, marks map[string]Param) (map[string]quoting, error) {
	where := map[string]quoting{}
	roots := map[syntax.Node]quoting{} // subtrees quoted otherwise than their parents say
	var stack []syntax.Node
	var err error
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		markRoots(n, roots)
		switch x := n.(type) {
		case *syntax.Lit:
			for m := range marks {
				if i := strings.Index(x.Value, m); i >= 0 {
					if strings.HasSuffix(x.Value[:i], `\`) {
						err = fmt.Errorf("param %s follows a backslash, which would join it to the command's text: remove the backslash", marks[m].Name)
					}
					where[m] = quotingOf(stack, roots)
				}
			}
		case *syntax.SglQuoted:
			for m := range marks {
				if strings.Contains(x.Value, m) {
					where[m] = inSingle
					if x.Dollar {
						where[m] = inANSI
					}
				}
			}
		}
		return true
	})
	return where, err
}

// markRoots notes the subtrees of n that the shell reads as arithmetic or as a here-document.
func markRoots(n syntax.Node, roots map[syntax.Node]quoting) {
	switch x := n.(type) {
	case *syntax.Assign:
		if x.Index != nil {
			roots[x.Index] = inArith
		}
	case *syntax.ParamExp:
		if x.Index != nil {
			roots[x.Index] = inArith
		}
		if x.Slice != nil {
			for _, e := range []syntax.ArithmExpr{x.Slice.Offset, x.Slice.Length} {
				if e != nil {
					roots[e] = inArith
				}
			}
		}
	case *syntax.BinaryTest:
		if arithTest(x.Op) {
			roots[x.X], roots[x.Y] = inArith, inArith
		}
	case *syntax.Redirect:
		if x.Hdoc != nil {
			roots[x.Hdoc] = inDouble
			if quotedDelimiter(x.Word) {
				roots[x.Hdoc] = inLiteral
			}
		}
	}
}

// arithTest reports whether [[ a OP b ]] compares a and b as arithmetic expressions.
func arithTest(op syntax.BinTestOperator) bool {
	switch op {
	case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
		return true
	}
	return false
}

// quotedDelimiter reports whether a here-document's delimiter is quoted (<<'EOF', <<\EOF),
// which leaves its body as written.
func quotedDelimiter(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(x.Value, `\`) {
				return true
			}
		}
	}
	return false
}

// quotingOf is how the innermost enclosing node of the stack quotes what it holds.
func quotingOf(stack []syntax.Node, roots map[syntax.Node]quoting) quoting {
	for i := len(stack) - 1; i >= 0; i-- {
		if q, ok := roots[stack[i]]; ok {
			return q
		}
		switch stack[i].(type) {
		case *syntax.DblQuoted:
			return inDouble
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return unquoted // a new level of quoting
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.CStyleLoop:
			return inArith
		}
	}
	return unquoted
}

// placeholderRE is a placeholder as the task file writes one: <name>.
var placeholderRE = lazyre.New(`<([A-Za-z_][A-Za-z0-9_.-]*)>`)

// unfilled lists the placeholders left in cmd where the shell would read them, not as text
// in quotes but as redirections (<width> reads the file width and writes the next word): a
// placeholder no for-each, matrix, sample or sampler filled. A cmd that does not parse is
// left to the shell to say so.
func unfilled(cmd string) []string {
	marked, marks := markPlaceholders(cmd, nil)
	if len(marks) == 0 {
		return nil
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(marked), "")
	if err != nil {
		return nil
	}
	where, _ := placeholderQuoting(f, marks)
	var out []string
	for m, p := range marks {
		if q, found := where[m]; found && (q == unquoted || q == inArith) && !slices.Contains(out, p.Name) {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}
