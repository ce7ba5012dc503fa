module variants/no_give_up

/* Broken: the worker never gives up; an operation that keeps failing never ends. */
open protocol

fact theVariant { Bug = NoGiveUp }

smallEveryOperationEndsFinal: check EveryOperationEndsFinal for 1 Key, 1 ClientAttempt, exactly 2 WorkerAttempt, 1 Int, 8..8 steps
