package mask

import (
	"reflect"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
)

// The gates every text runall shows passes, masked as it passes (Masker.Replace), so that
// masking does not depend on a list of fields someone keeps up to date:
//
//   - a task, as it enters the run (from the plan, or a sampler's trial as it is made):
//     its name and log-path: (and its steps' and trials'), which the output, the log files'
//     names, the results, Prometheus, the state file and the S3 markers show. Its params are
//     what its commands run with and stay as they are; they are shown through the results.
//   - an event, on the stream, before any consumer sees it (event.Stream.Gate): its line
//     and its reason, which the output draws, the results record and a webhook sends.
//   - the run's results, whole, before anything records them (every string of them, map
//     keys included): results.json, --results, the report, notify, the claims records.
//
// What a command prints is masked as it is read (proc.Masker), before a line is split.

// Task masks the names and log paths of t and everything in it.
func (m *Masker) Task(t *plan.Task) {
	plan.Walk([]*plan.Task{t}, func(t *plan.Task) {
		t.Name, t.LogPath = m.Replace(t.Name), m.Replace(t.LogPath)
	})
}

// Event masks ev's texts: the stream's gate.
func (m *Masker) Event(ev *event.Event) {
	ev.Line = m.Replace(ev.Line)
	ev.Reason = m.Replace(ev.Reason)
}

// All masks every string *v holds, through pointers, structs, slices and maps (keys too);
// bytes (json.RawMessage) and unexported fields are left alone.
func (m *Masker) All(v any) {
	if m.empty() {
		return
	}
	m.value(reflect.ValueOf(v))
}

func (m *Masker) value(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			m.value(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				m.value(f)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			m.value(v.Index(i))
		}
	case reflect.Map:
		m.mapValue(v)
	case reflect.String:
		if s := m.Replace(v.String()); s != v.String() && v.CanSet() {
			v.SetString(s)
		}
	}
}

// mapValue masks a map's keys and values: each entry is copied out (a map's are not
// addressable), masked, and put back only when it changed.
func (m *Masker) mapValue(v reflect.Value) {
	for _, k := range v.MapKeys() {
		val := reflect.New(v.Type().Elem()).Elem()
		val.Set(v.MapIndex(k))
		m.value(val)
		key := reflect.New(v.Type().Key()).Elem()
		key.Set(k)
		m.value(key)
		if key.Equal(k) && reflect.DeepEqual(val.Interface(), v.MapIndex(k).Interface()) {
			continue
		}
		v.SetMapIndex(k, reflect.Value{})
		v.SetMapIndex(key, val)
	}
}
