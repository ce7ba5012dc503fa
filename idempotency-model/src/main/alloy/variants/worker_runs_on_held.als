module variants/worker_runs_on_held

/* Broken: the worker runs the call although the claim answered Held. */
open protocol

fact theVariant { Bug = WorkerRunsOnHeld }

smallWorkerRunsOnlyWhatItHolds: check WorkerRunsOnlyWhatItHolds for 1 Key, 2 ClientAttempt, 2 WorkerAttempt, 1 Int, 8..8 steps
