package admit

import (
	"cmp"
	"slices"
)

// Room is a device a trial fits on now, and how much room it has there.
type Room struct {
	Device int
	Avail  uint64
}

// BestFit is the placement rule, for the admitter and for check --simulate alike: of the
// devices a trial fits on, the want with the least room that still fits, so that big gaps
// stay for big trials; ties go to the lower index. nil when fewer than want fit.
func BestFit(fits []Room, want int) []int {
	if len(fits) < want {
		return nil
	}
	sorted := slices.Clone(fits)
	slices.SortStableFunc(sorted, func(x, y Room) int { return cmp.Compare(x.Avail, y.Avail) })
	devs := make([]int, want)
	for i := range devs {
		devs[i] = sorted[i].Device
	}
	return devs
}
