package rounds

import (
	"context"
	"maps"
	"sync"
)

// memBoard is a block's board in memory: a runall that shares it with none.
type memBoard struct {
	mu      sync.Mutex
	values  map[int]map[string]float64
	ended   map[string]bool
	copying map[string]bool
	copied  map[string]bool
}

func newMemBoard() *memBoard {
	return &memBoard{values: map[int]map[string]float64{}, ended: map[string]bool{}, copying: map[string]bool{}, copied: map[string]bool{}}
}

func (m *memBoard) Load(context.Context) (map[int]map[string]float64, map[string]bool, map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	values := map[int]map[string]float64{}
	for step, vs := range m.values {
		values[step] = maps.Clone(vs)
	}
	return values, maps.Clone(m.ended), maps.Clone(m.copied), nil
}

func (m *memBoard) TakeCopy(_ context.Context, step int, trial string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := copyKey(step, trial)
	first := !m.copying[k]
	m.copying[k] = true
	return first, nil
}

func (m *memBoard) Copied(_ context.Context, step int, trial string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.copied[copyKey(step, trial)] = true
	return nil
}

func (m *memBoard) Value(_ context.Context, step int, trial string, v float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.values[step] == nil {
		m.values[step] = map[string]float64{}
	}
	m.values[step][trial] = v
	return nil
}

func (m *memBoard) Ended(_ context.Context, trial string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ended[trial] = true
	return nil
}
