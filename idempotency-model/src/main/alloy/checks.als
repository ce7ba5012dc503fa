module checks

/*
 * The protocol as the code has it (no Bug): every invariant holds. The small commands run in every
 * build, the deep ones at larger bounds (-Didempotency.model.deep=true). Scopes: keys, client
 * attempts and worker attempts (each attempt is one owner token), and the trace length in steps.
 * One key is enough: no step of one key reads or writes another key.
 * A trace of n steps stands for every shorter one too, since any step may be a stutter (keepAll),
 * and Alloy's traces loop back, so a check covers infinite behaviours of that shape.
 */
open protocol

fact theProtocol { no Bug }

smallAtMostOneCompletion: check AtMostOneCompletion for 1 Key, 2 ClientAttempt, 1 WorkerAttempt, 1 Int, 7..7 steps
smallStaleNeverRecords: check StaleNeverRecords for 1 Key, 2 ClientAttempt, 1 WorkerAttempt, 1 Int, 7..7 steps
smallPrepareNeverRepeats: check PrepareNeverRepeats for 1 Key, 2 ClientAttempt, 1 WorkerAttempt, 1 Int, 7..7 steps
smallWorkerRunsOnlyWhatItHolds: check WorkerRunsOnlyWhatItHolds for 1 Key, 2 ClientAttempt, 1 WorkerAttempt, 1 Int, 7..7 steps
smallAnswersMatchRecord: check AnswersMatchRecord for 1 Key, 2 ClientAttempt, 1 WorkerAttempt, 1 Int, 7..7 steps
smallLeaseExclusive: check LeaseExclusive for 1 Key, 2 ClientAttempt, 1 WorkerAttempt, 1 Int, 7..7 steps
smallEveryOperationEndsFinal: check EveryOperationEndsFinal for 1 Key, 1 ClientAttempt, exactly 2 WorkerAttempt, 1 Int, 8..8 steps

deepAtMostOneCompletion: check AtMostOneCompletion for 1 Key, 3 ClientAttempt, 2 WorkerAttempt, 1 Int, 12..12 steps
deepStaleNeverRecords: check StaleNeverRecords for 1 Key, 3 ClientAttempt, 2 WorkerAttempt, 1 Int, 12..12 steps
deepPrepareNeverRepeats: check PrepareNeverRepeats for 1 Key, 3 ClientAttempt, 2 WorkerAttempt, 1 Int, 12..12 steps
deepWorkerRunsOnlyWhatItHolds: check WorkerRunsOnlyWhatItHolds for 1 Key, 3 ClientAttempt, 2 WorkerAttempt, 1 Int, 12..12 steps
deepAnswersMatchRecord: check AnswersMatchRecord for 1 Key, 3 ClientAttempt, 2 WorkerAttempt, 1 Int, 12..12 steps
deepLeaseExclusive: check LeaseExclusive for 1 Key, 3 ClientAttempt, 2 WorkerAttempt, 1 Int, 12..12 steps
deepEveryOperationEndsFinal: check EveryOperationEndsFinal for 1 Key, 2 ClientAttempt, exactly 4 WorkerAttempt, 1 Int, 12..12 steps

/*
 * Not an invariant: a stalled call extends its lease on a record past its retention, and the next
 * claim takes the key as new while that lease is live. An instance is expected (see protocol.als,
 * callsEndWithinRetention).
 */
smallExtensionPastRetention: check { leaseExclusive } for 1 Key, 2 ClientAttempt, 0 WorkerAttempt, 1 Int, 8..8 steps
