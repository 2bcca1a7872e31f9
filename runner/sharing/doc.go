// Package sharing decides, from measured progress rates, how many trials share each GPU
// under gpu-sharing: progress (issue 36, point 3). It is pure and deterministic: it reads no
// clock, process or device, and knows trials only by the figures it is handed.
//
// The rule: an empty GPU takes a trial. A GPU with trials takes one more (that has the
// memory: the admitter asked first) only while the last one admitted there raised the GPU's
// throughput, the sum over its trials of each one's rate shared divided by its rate alone,
// by more than Options.Margin. A mix that a trial made slower than it was before is lowered:
// the trial admitted last is paused at its next checkpoint copy when it can be, and no GPU
// of that model (Model) adds that kind of trial to that mix again. A GPU tries again when its mix of
// trials changes (one ends, one of another kind joins). Rates alone come from earlier runs
// (Trial.Alone: runner/history keeps them by task key and GPU model, as it keeps
// durations), else from the trial, or the first trial of its kind, measured alone on a
// GPU; a trial whose rate
// alone is known none of these ways joins only an empty GPU, where it is measured. A GPU
// whose utilisation says it is saturated takes no trial never tried with its mix.
//
// Where the GPU reports each process's utilisation (Busy), the controller also places by
// each trial's busy share alone, the part of the GPU's time its kernels fill (busy.go): a
// GPU whose trials' shares fill its time takes no more, a trial whose share does not fit
// beside them waits for a GPU with room (a light trial is not put beside a heavy one, two
// heavy ones are kept apart), and trials whose shares fit join before the mix is measured
// while none there computes less than its share alone, the mix they made judged by its
// rates against the one before them. Under MPS (Options.Overlap) the kernels of a GPU's
// trials run at once, so shares that add up to more than its time keep no trial out: only
// the early joins of shares that fit stand, and the rates judge every mix.
//
//	            Started(t)                       Measured(rate) ... every trial on the
//	empty ─────────────────▶ mix changed ──────▶ GPU has a rate from within the mix
//	  ▲                          ▲                          │ judged once per mix
//	  │ Left (last one)          │ Started / Left           ▼
//	  └──────────────────────────┴───────── Open | Keep | Lower(+pause last) | Alone
//
// How it is wired (runner/sharing_run.go, runner/sharing_events.go). One Controller per
// run, made when a trial asks for gpu-sharing: progress, with the default Margin and a
// MinWindow of the run's shortest rate window (0.9 s); its Trial values from the plan (ID: the trial's
// name; Kind: its block's Group, else its Key, so that a sweep's trials share a rate alone;
// Alone: history's RateAlone by Task.Key and the model of the GPU asked; CanPause: Task.Checkpoint != nil and the run has
// a pauser), its clock the run's elapsed time, a GPU named by its index:
//
//   - The GPU admitter, after it found the devices with the memory for a trial under
//     gpu-sharing: progress, asks MayAdmit for each through the gate the GPU room put in
//     the trial's request (admit.Request.Gate); Wait is the trial's waiting
//     reason (Decision.String), and the admitter tries the next device or the next trial.
//   - The GPU room (runner/rooms.go) calls Started when the trial is placed and Left when it
//     releases it (it ended, paused or was requeued), on that device (a trial on several
//     devices: each of them).
//   - Each shared trial's rate, the change of its steps (its TaskProgress events, the last
//     from its final end) over a window of 0.9 s and 8 steps (2 s at most) that starts afresh
//     when its GPU's mix changes, goes to Measured (a rate that cannot be true judges
//     nothing: believe.go), which returns the decisions to act on: each is said on the output
//     stream (Decision.String), and for Lower with Pause the trial's GPU room
//     (runner/trial's GPURoom.Pause) pauses it at its next checkpoint copy; the run's
//     pauser then puts it back in line to resume when room opens.
//   - The admitter's samples (admit.Options.Busy) tell each trial's share of its devices'
//     time, from the driver's per-process utilisation, which goes to Busy, and each
//     device's name, which goes to Model. Device utilisation (Utilisation) is not passed:
//     the trials' shares say more.
//   - At the run's end, the run copies Figures into results.json's own record (per trial:
//     rate alone, rate shared, slowdown; per GPU: its number of trials over time;
//     results.Sharing, which imports no controller), history records each rate
//     measured alone (AloneFrom "measured") by task key and the model of the GPU it was
//     measured on, and the summary says Summary().
//
// The controller acts on measured rates whatever slows the trials (time-slicing, memory
// bandwidth, the host's CPU cores): it never computes a rate from a model of the GPU.
package sharing
