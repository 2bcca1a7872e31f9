package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// traceCategories are what DevTools' Performance panel records: the renderer's tasks,
// style, layout, paint and commit, the canvases' flushes, and the script's own marks.
var traceCategories = []string{"devtools.timeline", "disabled-by-default-devtools.timeline",
	"disabled-by-default-devtools.timeline.frame", "v8.execute", "blink", "blink.user_timing", "cc", "toplevel", "viz", "gpu"}

// traced runs act with Chromium's tracing on and returns the trace, in the JSON that
// DevTools' Performance panel loads (chrome://tracing and Perfetto read it too).
func traced(ctx context.Context, act func() error) ([]byte, error) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var events []json.RawMessage
	complete := make(chan struct{})
	err := chromedp.Listen(tctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			for _, v := range e.Value {
				events = append(events, json.RawMessage(v))
			}
			mu.Unlock()
		case *tracing.EventTracingComplete:
			close(complete)
		}
	})
	if err != nil {
		return nil, err
	}
	config := &tracing.TraceConfig{IncludedCategories: traceCategories}
	if _, err := chromedp.Call(ctx, tracing.Start, tracing.StartParams{TraceConfig: config, TransferMode: tracing.StartTransferModeReportEvents}); err != nil {
		return nil, fmt.Errorf("starting the trace: %w", err)
	}
	actErr := act()
	if _, err := chromedp.Call(ctx, tracing.End, cdp.Empty{}); err != nil {
		return nil, fmt.Errorf("ending the trace: %w", err)
	}
	select {
	case <-complete:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if actErr != nil {
		return nil, actErr
	}
	mu.Lock()
	defer mu.Unlock()
	return json.Marshal(map[string]any{"traceEvents": events})
}
