package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// parsed is what the limits read of one Go file.
type parsed struct {
	rel     string // its path under the root
	pkg     string // its directory: its package
	lines   int
	funcs   []funcSize
	structs []structDecl
	methods map[string]int // receiver type → methods declared here
	fences  []fenceCall    // calls that remove, rename, truncate or append to a path (fence.go)
}

type funcSize struct {
	name  string
	line  int
	lines int
}

// structDecl is a struct type as declared: its own fields, the same package's types it
// embeds, and the reason it is a flat record, if it says one.
type structDecl struct {
	name     string
	line     int
	fields   int
	embedded []string
	flat     string
}

func parse(path string) (parsed, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return parsed{}, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return parsed{}, err
	}
	p := parsed{pkg: filepath.Dir(path), lines: bytes.Count(src, []byte("\n")), methods: map[string]int{}}
	if len(src) > 0 && src[len(src)-1] != '\n' {
		p.lines++
	}
	p.fences = fenceCalls(fset, f, src)
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			p.addFunc(fset, d)
		case *ast.GenDecl:
			p.addStructs(fset, d)
		}
	}
	return p, nil
}

func (p *parsed) addFunc(fset *token.FileSet, d *ast.FuncDecl) {
	start, end := fset.Position(d.Pos()).Line, fset.Position(d.End()).Line
	name := d.Name.Name
	if recv := receiver(d); recv != "" {
		name = recv + "." + name
		p.methods[recv]++
	}
	p.funcs = append(p.funcs, funcSize{name: name, line: start, lines: end - start + 1})
}

// receiver is the name of d's receiver type, "" for a function.
func receiver(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	x := d.Recv.List[0].Type
	if s, ok := x.(*ast.StarExpr); ok {
		x = s.X
	}
	switch t := x.(type) {
	case *ast.IndexExpr:
		x = t.X
	case *ast.IndexListExpr:
		x = t.X
	}
	if id, ok := x.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func (p *parsed) addStructs(fset *token.FileSet, d *ast.GenDecl) {
	for _, s := range d.Specs {
		ts, ok := s.(*ast.TypeSpec)
		if !ok {
			continue
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		doc := ts.Doc
		if doc == nil && len(d.Specs) == 1 {
			doc = d.Doc
		}
		sd := structDecl{name: ts.Name.Name, line: fset.Position(ts.Pos()).Line, flat: flatReason(doc)}
		for _, fl := range st.Fields.List {
			if len(fl.Names) > 0 {
				sd.fields += len(fl.Names)
				continue
			}
			sd.fields++
			x := fl.Type
			if s, ok := x.(*ast.StarExpr); ok {
				x = s.X
			}
			if id, ok := x.(*ast.Ident); ok {
				sd.embedded = append(sd.embedded, id.Name)
			}
		}
		p.structs = append(p.structs, sd)
	}
}

// flatReason is the reason a "//limits:flat REASON" line of doc gives, "" without one.
func flatReason(doc *ast.CommentGroup) string {
	if doc == nil {
		return ""
	}
	for _, c := range doc.List {
		if r, ok := strings.CutPrefix(c.Text, "//limits:flat "); ok {
			return strings.TrimSpace(r)
		}
	}
	return ""
}

// typeSize is a struct type's size, counting what its embedded types promote.
type typeSize struct {
	file, name      string
	line            int
	fields, methods int
	flat            string
}

// typeSizes measures every struct type of files, package by package.
func typeSizes(files []parsed) []typeSize {
	type key struct{ pkg, name string }
	decls := map[key]structDecl{}
	where := map[key]string{}
	methods := map[key]int{}
	for _, f := range files {
		for _, s := range f.structs {
			decls[key{f.pkg, s.name}] = s
			where[key{f.pkg, s.name}] = f.rel
		}
		for recv, n := range f.methods {
			methods[key{f.pkg, recv}] += n
		}
	}
	var count func(k key, seen map[key]bool) (fields, meths int)
	count = func(k key, seen map[key]bool) (int, int) {
		if seen[k] {
			return 0, 0
		}
		seen[k] = true
		s, ok := decls[k]
		if !ok {
			return 0, methods[k]
		}
		f, m := s.fields, methods[k]
		for _, e := range s.embedded {
			ef, em := count(key{k.pkg, e}, seen)
			f, m = f+ef, m+em
		}
		return f, m
	}
	var out []typeSize
	for k, s := range decls {
		f, m := count(k, map[key]bool{})
		out = append(out, typeSize{file: where[k], name: filepath.Base(k.pkg) + "." + k.name, line: s.line, fields: f, methods: m, flat: s.flat})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].file < out[j].file || out[i].file == out[j].file && out[i].line < out[j].line
	})
	return out
}
