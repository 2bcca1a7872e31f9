// Package trial launches and runs one trial: its steps in order, each command through the
// executor with its log, its environment and its rooms, and tells the run what happens. It
// imports neither the runner that drives it nor any consumer of the run's events; what it
// needs of the run arrives as the small interfaces of run.go, and what a task ran so far it
// reads from the run's one record of it, the ledger's (Life.Result, record.go).
//
//	sched admits a *sched.Trial ──▶ Launcher.RunTrial (stop-when gate; its steps in order)
//	  └─▶ runCommand: log, script (url:, cwd:), env (plan.TaskVars, then each Room's Env)
//	        └─▶ executor.Run ──▶ command's hooks, per attempt:
//	              Started ─ each Room.Begin (handed the Attempt), then Room.Started(pgid)
//	              Line    ─ tails, metrics, progress, each Room.Line, the log
//	              (any time) a room's Attempt.Pause ─▶ stopped at its next kept copy,
//	                        ended paused (command_pause.go)
//	              Ended   ─ each Room.Ended; the reason (Room.Says); then each Room.Failed
//	                        in turn: requeue ─▶ sched.Outcome{Requeue}, final ─▶ failed,
//	                        none ─▶ the task's retries (retry loops back to Started)
//	        └─▶ conclude: ok, stopped, paused (Outcome{Pause}), ignored or failed:
//	            Life.Finish with what each Room.Detail and the command learned
//
// A Room is a resource's side of one command: GPU memory, host memory and a GPU's MPS
// server are three values of it, each defined with its resource (runner/gpures,
// runner/hostres), so that this package knows no admitter and no GPU; a new resource is a
// new Room, not an edit of the command. A room may ask for its trial's pause through the
// Attempt it is handed as each attempt begins (a trial with checkpoint: only); gpu-sharing:
// progress asks the GPU room's (gpures.GPURoom.Pause) to pause a trial that lowered its GPU.
package trial
