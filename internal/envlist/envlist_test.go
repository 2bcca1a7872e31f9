package envlist

import "testing"

func TestEnv(t *testing.T) {
	env := []string{"A=1", "B=2", "A=3"}
	if v, ok := Lookup(env, "A"); !ok || v != "3" {
		t.Errorf("Lookup A = %q %v, want the last, 3", v, ok)
	}
	if _, ok := Lookup(env, "C"); ok {
		t.Error("Lookup C found something")
	}
	env = Set(env, "A", "4")
	if v, _ := Lookup(env, "A"); v != "4" {
		t.Errorf("after Set, A = %q", v)
	}
	env = Set(env, "C", "5")
	if v, _ := Lookup(env, "C"); v != "5" || len(env) != 4 {
		t.Errorf("after Set C: %q", env)
	}
}
