module variants/early_take_over

/* Broken: the claim judges the lease by the asking node's clock, which runs ahead; it takes a live lease over. */
open protocol

fact theVariant { Bug = EarlyTakeOver }

smallLeaseExclusive: check LeaseExclusive for 1 Key, 2 ClientAttempt, 2 WorkerAttempt, 1 Int, 8..8 steps
