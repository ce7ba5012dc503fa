module variants/release_drops_point

/* Broken: releaseLease drops the recovery point; the next attempt runs the prepare again. */
open protocol

fact theVariant { Bug = ReleaseDropsPoint }

smallPrepareNeverRepeats: check PrepareNeverRepeats for 1 Key, 2 ClientAttempt, 2 WorkerAttempt, 1 Int, 8..8 steps
