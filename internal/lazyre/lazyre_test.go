package lazyre

import (
	"reflect"
	"testing"
)

func TestMatchesAsRegexp(t *testing.T) {
	r := New(`^(\w+)=(\d+)$`)
	if !r.MatchString("a=1") || r.MatchString("a=x") {
		t.Error("MatchString disagrees with the pattern")
	}
	if got, want := r.FindStringSubmatch("lr=3"), []string{"lr=3", "lr", "3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("FindStringSubmatch = %q, want %q", got, want)
	}
	all := New(`(\w)=(\d)`).FindAllStringSubmatch("a=1 b=2", -1)
	if want := [][]string{{"a=1", "a", "1"}, {"b=2", "b", "2"}}; !reflect.DeepEqual(all, want) {
		t.Errorf("FindAllStringSubmatch = %q, want %q", all, want)
	}
}

// A test binary compiles every pattern as it is declared, so a bad one fails its package's
// tests; a program compiles it on first use.
func TestCompiledWhen(t *testing.T) {
	if !inTest {
		t.Fatal("a test binary is not recognised as one")
	}
	mustPanic(t, "New in a test binary", func() { New(`(`) })

	inTest = false
	defer func() { inTest = true }()
	r := New(`(`) // not compiled yet: no panic
	if r.rx != nil {
		t.Fatal("compiled before its first use")
	}
	mustPanic(t, "first use", func() { r.MatchString("x") })
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s of a bad pattern did not panic", what)
		}
	}()
	f()
}
