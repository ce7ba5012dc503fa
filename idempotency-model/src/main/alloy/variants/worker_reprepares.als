module variants/worker_reprepares

/* Broken: the worker runs the prepare again although the record has its recovery point. */
open protocol

fact theVariant { Bug = WorkerReprepares }

smallPrepareNeverRepeats: check PrepareNeverRepeats for 1 Key, 2 ClientAttempt, 2 WorkerAttempt, 1 Int, 8..8 steps
