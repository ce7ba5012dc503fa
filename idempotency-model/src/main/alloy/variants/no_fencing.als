module variants/no_fencing

/* Broken: completeLeased ignores the owner token; a stale attempt overwrites the record. */
open protocol

fact theVariant { Bug = NoFencing }

smallStaleNeverRecords: check StaleNeverRecords for 1 Key, 2 ClientAttempt, 2 WorkerAttempt, 1 Int, 8..8 steps
smallAtMostOneCompletion: check AtMostOneCompletion for 1 Key, 2 ClientAttempt, 2 WorkerAttempt, 1 Int, 8..8 steps
smallAnswersMatchRecord: check AnswersMatchRecord for 1 Key, 2 ClientAttempt, 2 WorkerAttempt, 1 Int, 8..8 steps
