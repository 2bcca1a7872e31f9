package plan

import (
	"fmt"
	"testing"
)

// A task's Group is identity(joinPath(...)) of its templates, as it has always been: runs of
// a file keep learned needs by it.
func TestTemplatePathGroup(t *testing.T) {
	top := &templatePath{own: "block\x00" + "many trials' commands"}
	mid := &templatePath{parent: top, own: "steps\x00"}
	var kids []*templatePath
	for i := range 3 {
		kids = append(kids, &templatePath{parent: mid, own: fmt.Sprintf("t%d\x00true\x00", i)})
	}
	for _, p := range append([]*templatePath{top, mid}, kids...) {
		want := identity(p.text())
		if got := p.group(); got != want {
			t.Errorf("group of %q = %s, want identity of its path %s", p.text(), got, want)
		}
	}
	if got, want := kids[2].text(), top.own+"/"+mid.own+"/"+kids[2].own; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	// Siblings do not disturb each other's hash: each continues a clone of the parent's.
	if kids[0].group() != identity(kids[0].text()) || kids[0].group() == kids[1].group() {
		t.Errorf("siblings' groups %s %s", kids[0].group(), kids[1].group())
	}
}
