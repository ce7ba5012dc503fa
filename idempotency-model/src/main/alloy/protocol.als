module protocol

/*
 * Lease mode with recovery phases, as idempotency-core runs it: the claim (LeasingStore.claimLease)
 * with the prepare phase and its recovery point (checkpoint) in one transaction, the call outside
 * any transaction, the fenced completion (completeLeased with the owner token), the lease's
 * extension and release, the recovery worker (RecoveringStore.pending, resume, giveUp, delist),
 * retention, expiry and purge. See docs/model.md.
 *
 * Every attempt (LeaseProtocol.run or resume, each with its own random owner token) is one atom
 * of Attempt: the atom is the token. An attempt whose claim answers Held takes no token and stays
 * Idle, so it may claim again later (a retry); every other claim ends the atom's career.
 *
 * Time is the store's clock alone, as events: a lease ends (leaseEnds), a record's retention ends
 * (expires). No action reads a node's clock. A node's clock may run ahead (ClockAhead): the
 * protocol never reads it, and the broken variant EarlyTakeOver does.
 *
 * Each Bug atom, when present, switches one broken variant on; the files under variants/ and
 * checks.als say which are present (no Bug: the protocol as the code has it).
 */

abstract sig Bug {}
/** completeLeased ignores the owner token: any record of the key is overwritten. */
lone sig NoFencing extends Bug {}
/** claimLease judges the lease by the asking node's clock, which may run ahead of the store's. */
lone sig EarlyTakeOver extends Bug {}
/** The worker runs the prepare again although the record has a recovery point. */
lone sig WorkerReprepares extends Bug {}
/** The worker runs the call although the claim answered Held (it holds nothing). */
lone sig WorkerRunsOnHeld extends Bug {}
/** releaseLease drops the recovery point with the lease. */
lone sig ReleaseDropsPoint extends Bug {}
/** The worker never gives up: it resumes whatever the attempts. */
lone sig NoGiveUp extends Bug {}

/*
 * RetryPolicy.maxAttempts of the worker (attempts in all, the client's included) is 2 here: the
 * worker resumes while one attempt was counted on the record (lone claimedBy), and gives up after.
 * Counting without integers keeps the SAT problems small.
 */

/** RecordStatus. */
abstract sig RecordStatus {}
one sig IN_PROGRESS, COMPLETED, FAILED extends RecordStatus {}

/** Where an attempt is (its program counter in LeaseProtocol). */
abstract sig Pc {}
one sig
  Idle,      // not claimed (yet): a client that got InProgress retries from here
  Claimed,   // the claim (and the prepare with its recovery point) committed; the call runs
  Called,    // the call returned; the finish transaction is next
  GivingUp,  // the worker's giveUp took the key over; its final failure is next
  Answered,  // the outcome is recorded (or replayed) and handed back
  Lost,      // LeaseLostException: the fenced completion found another token
  Released,  // a failure that is not final: the lease was ended (releaseLease), the caller retries
  Stopped    // crashed: takes no more steps (its lease runs out by the store's clock)
  extends Pc {}

/** An idempotency key with its record in the store (StoredRecord, and the lease columns). */
sig Key {
  var status: lone RecordStatus,   // no status: no record
  var owner: lone Attempt,          // the owner token; none once the record is completed or failed
  var point: lone Attempt,          // the recovery point (RecoveryPoint.PREPARED): whose prepare committed it
  var result: lone Attempt,         // the recorded outcome: the execution whose value it is
  var claimedBy: set Attempt,       // the attempts counted on this record (LeaseClaim.Acquired.attempt)
  // history, for the assertions
  var prepped: set Attempt,         // the prepares committed for this record (since the key counted as new)
  var done: set Attempt             // the completions recorded for this record
}

/** The store's other state, and history kept for the assertions. */
one sig Store {
  var pending: set Key,             // RecoveringStore entries: named operations enlisted
  var expired: set Key,             // records whose retention ended by the store's clock
  var leased: set Attempt,          // attempts whose lease has not ended by the store's clock
  // history
  var acquired: set Attempt,        // attempts whose claim answered Acquired
  var superseded: set Attempt       // attempts whose token another attempt's claim replaced
}

abstract sig Attempt {
  key: one Key,
  var pc: one Pc,
  var answer: lone Attempt          // the outcome handed back: whose execution's value (history)
}
/** An attempt of the operation's client (ManagedIdempotency.run). */
sig ClientAttempt extends Attempt {}
/** An attempt of a RecoveryWorker (LeaseProtocol.resume or giveUp). */
sig WorkerAttempt extends Attempt {}
/** Attempts on a node whose clock runs ahead of the store's by more than the lease. */
sig ClockAhead in Attempt {}

-- ---------------------------------------------------------------- what the store sees

pred inProgress[k: Key] { k.status = IN_PROGRESS and k not in Store.expired }
pred settled[k: Key] { k.status in COMPLETED + FAILED and k not in Store.expired }
/** No record, or only an expired one: claimLease takes the key as attempt 1. */
pred isNew[k: Key] { no k.status or k in Store.expired }
/** The holder's lease has not ended, by the store's clock. */
pred leaseLive[k: Key] { k.owner in Store.leased }
/** What PendingOperation.abandoned() says: in progress, its lease ended. */
pred abandoned[k: Key] { inProgress[k] and not leaseLive[k] }
/** Whether claimLease takes a record in progress over for attempt a. */
pred mayTakeOver[a: Attempt] {
  not leaseLive[a.key] or (some EarlyTakeOver and a in ClockAhead)
}
/** What completeLeased requires: the token still holds the record in progress. */
pred fenced[a: Attempt] {
  no NoFencing implies (a.key.owner = a and a.key.status = IN_PROGRESS) else some a.key.status
}

-- ---------------------------------------------------------------- frame conditions

pred keepKey[k: Key] {
  k.status' = k.status and k.owner' = k.owner and k.point' = k.point and k.result' = k.result
  k.claimedBy' = k.claimedBy and k.prepped' = k.prepped and k.done' = k.done
}
pred keepKeys[ks: set Key] { all k: ks | keepKey[k] }
pred keepStore {
  Store.pending' = Store.pending and Store.expired' = Store.expired and Store.leased' = Store.leased
  Store.acquired' = Store.acquired and Store.superseded' = Store.superseded
}
pred keepAttempts[xs: set Attempt] { all b: xs | b.pc' = b.pc and b.answer' = b.answer }
pred keepAll { keepKeys[Key] and keepStore and keepAttempts[Attempt] }

/** The claim took the key for a: its token holds it under a new lease, one more attempt counted. */
pred acquire[a: Attempt] {
  let k = a.key {
    k.owner' = a
    Store.leased' = Store.leased + a
    Store.acquired' = Store.acquired + a
    Store.superseded' = Store.superseded + k.owner
  }
}

-- ---------------------------------------------------------------- the client's steps

/** claimLease finds no record (or an expired one): attempt 1; the prepare commits with its recovery point, enlist. */
pred claimNew[a: ClientAttempt] {
  let k = a.key {
    a in ClientAttempt and a.pc = Idle and isNew[k]
    acquire[a]
    k.status' = IN_PROGRESS and k.point' = a and k.result' = none
    k.claimedBy' = a and k.prepped' = a and k.done' = none
    Store.pending' = Store.pending + k and Store.expired' = Store.expired - k
    a.pc' = Claimed and a.answer' = a.answer
    keepKeys[Key - k] and keepAttempts[Attempt - a]
  }
}

/** claimLease takes over a record in progress whose lease ended; resumes from its recovery point (the prepare runs only if it has none). */
pred takeOver[a: ClientAttempt] {
  let k = a.key {
    a in ClientAttempt and a.pc = Idle and inProgress[k] and mayTakeOver[a]
    acquire[a]
    k.status' = k.status and k.result' = k.result and k.done' = k.done
    k.claimedBy' = k.claimedBy + a
    some k.point implies (k.point' = k.point and k.prepped' = k.prepped)
                     else (k.point' = a and k.prepped' = k.prepped + a)
    Store.pending' = Store.pending and Store.expired' = Store.expired
    a.pc' = Claimed and a.answer' = a.answer
    keepKeys[Key - k] and keepAttempts[Attempt - a]
  }
}

/** claimLease finds a completed or failed record: LeaseClaim.Existing, replayed. */
pred replay[a: ClientAttempt] {
  let k = a.key {
    a in ClientAttempt and a.pc = Idle and settled[k]
    a.pc' = Answered and a.answer' = k.result
    keepKeys[Key] and keepStore and keepAttempts[Attempt - a]
  }
}

-- ---------------------------------------------------------------- the worker's steps

/** The worker's resume: an abandoned named operation with a recovery point, fewer than maxAttempts so far. */
pred resume[w: WorkerAttempt] {
  let k = w.key {
    w in WorkerAttempt and w.pc = Idle and k in Store.pending and abandoned[k] and some k.point
    some NoGiveUp or lone k.claimedBy
    acquire[w]
    k.status' = k.status and k.result' = k.result and k.done' = k.done
    k.claimedBy' = k.claimedBy + w
    no WorkerReprepares implies (k.point' = k.point and k.prepped' = k.prepped)
                        else (k.point' = w and k.prepped' = k.prepped + w)
    Store.pending' = Store.pending and Store.expired' = Store.expired
    w.pc' = Claimed and w.answer' = w.answer
    keepKeys[Key - k] and keepAttempts[Attempt - w]
  }
}

/** The worker's giveUp: the same take-over once maxAttempts attempts were counted; RecoveryGaveUpException comes next. */
pred giveUp[w: WorkerAttempt] {
  let k = w.key {
    no NoGiveUp
    w in WorkerAttempt and w.pc = Idle and k in Store.pending and abandoned[k] and some k.point and not lone k.claimedBy
    acquire[w]
    k.status' = k.status and k.result' = k.result and k.done' = k.done and k.point' = k.point
    k.prepped' = k.prepped and k.claimedBy' = k.claimedBy + w
    Store.pending' = Store.pending and Store.expired' = Store.expired
    w.pc' = GivingUp and w.answer' = w.answer
    keepKeys[Key - k] and keepAttempts[Attempt - w]
  }
}

/** Broken: the worker runs the operation although the claim answered Held. */
pred runOnHeld[w: WorkerAttempt] {
  some WorkerRunsOnHeld
  w in WorkerAttempt and w.pc = Idle and w.key in Store.pending and inProgress[w.key] and leaseLive[w.key]
  w.pc' = Claimed and w.answer' = w.answer
  keepKeys[Key] and keepStore and keepAttempts[Attempt - w]
}

/** The worker removes the entry of an operation that has its outcome, or whose record is gone. */
pred delist[k: Key] {
  k in Store.pending and k.status != IN_PROGRESS
  Store.pending' = Store.pending - k
  Store.expired' = Store.expired and Store.leased' = Store.leased
  Store.acquired' = Store.acquired and Store.superseded' = Store.superseded
  keepKeys[Key] and keepAttempts[Attempt]
}

-- ---------------------------------------------------------------- any attempt's steps

/** The call, outside any transaction (with the downstream key), returns. */
pred call[a: Attempt] {
  a.pc = Claimed
  a.pc' = Called and a.answer' = a.answer
  keepKeys[Key] and keepStore and keepAttempts[Attempt - a]
}

/** LeaseAttempt.extend: extendLease, fenced by the token (a no-op for a token that lost the key). */
pred extend[a: Attempt] {
  a.pc = Claimed and a.key.owner = a
  Store.leased' = Store.leased + a
  Store.pending' = Store.pending and Store.expired' = Store.expired
  Store.acquired' = Store.acquired and Store.superseded' = Store.superseded
  keepKeys[Key] and keepAttempts[Attempt]
}

/** The call fails, not finally: releaseLease (fenced) ends the lease, the record stays in progress. */
pred fail[a: Attempt] {
  let k = a.key {
    a.pc = Claimed
    a.pc' = Released and a.answer' = a.answer
    k.owner = a implies {
      Store.leased' = Store.leased - a
      some ReleaseDropsPoint implies k.point' = none else k.point' = k.point
    } else {
      Store.leased' = Store.leased and k.point' = k.point
    }
    k.status' = k.status and k.owner' = k.owner and k.result' = k.result
    k.claimedBy' = k.claimedBy and k.prepped' = k.prepped and k.done' = k.done
    Store.pending' = Store.pending and Store.expired' = Store.expired
    Store.acquired' = Store.acquired and Store.superseded' = Store.superseded
    keepKeys[Key - k] and keepAttempts[Attempt - a]
  }
}

/** The finish transaction: completeLeased with the token, and delist, committed (a final failure records FAILED). */
pred record[a: Attempt, s: RecordStatus] {
  let k = a.key {
    (a.pc = Called and s in COMPLETED + FAILED) or (a.pc = GivingUp and s = FAILED)
    fenced[a]
    k.status' = s and k.owner' = none and k.result' = a and k.done' = k.done + a
    k.point' = k.point and k.claimedBy' = k.claimedBy and k.prepped' = k.prepped
    Store.leased' = Store.leased - a
    Store.pending' = Store.pending - k and Store.expired' = Store.expired - k
    Store.acquired' = Store.acquired and Store.superseded' = Store.superseded
    a.pc' = Answered and a.answer' = a
    keepKeys[Key - k] and keepAttempts[Attempt - a]
  }
}

/** The fenced completion finds another token: LeaseLostException, the finish's writes roll back. */
pred lose[a: Attempt] {
  a.pc in Called + GivingUp and not fenced[a]
  a.pc' = Lost and a.answer' = a.answer
  keepKeys[Key] and keepStore and keepAttempts[Attempt - a]
}

/** A crash: the attempt takes no more steps; a transaction it had open rolled back. */
pred stop[a: Attempt] {
  a.pc in Idle + Claimed + Called + GivingUp
  a.pc' = Stopped and a.answer' = a.answer
  keepKeys[Key] and keepStore and keepAttempts[Attempt - a]
}

-- ---------------------------------------------------------------- the store's clock

/** The store's clock passes the end of a's lease. */
pred leaseEnds[a: Attempt] {
  a in Store.leased
  Store.leased' = Store.leased - a
  Store.pending' = Store.pending and Store.expired' = Store.expired
  Store.acquired' = Store.acquired and Store.superseded' = Store.superseded
  keepKeys[Key] and keepAttempts[Attempt]
}

/** The store's clock passes the record's expiry (retention, longer than any lease): the key counts as new. */
pred expires[k: Key] {
  some k.status and k not in Store.expired and not leaseLive[k]
  Store.expired' = Store.expired + k
  Store.pending' = Store.pending and Store.leased' = Store.leased
  Store.acquired' = Store.acquired and Store.superseded' = Store.superseded
  keepKeys[Key]
  all b: Attempt | b.pc' = b.pc and (b.key = k implies no b.answer' else b.answer' = b.answer)
}

/** IdempotencyStore.purgeExpired deletes the expired record. */
pred purge[k: Key] {
  k in Store.expired
  no k.status' and no k.owner' and no k.point' and no k.result'
  no k.claimedBy' and no k.prepped' and no k.done'
  Store.expired' = Store.expired - k
  Store.pending' = Store.pending and Store.leased' = Store.leased
  Store.acquired' = Store.acquired and Store.superseded' = Store.superseded
  keepKeys[Key - k] and keepAttempts[Attempt]
}

-- ---------------------------------------------------------------- traces

pred init {
  no Key.status and no Key.owner and no Key.point and no Key.result
  no Key.claimedBy and no Key.prepped and no Key.done
  no Store.pending and no Store.expired and no Store.leased and no Store.acquired and no Store.superseded
  Attempt.pc = Idle and no Attempt.answer
}

pred claim[a: Attempt] {
  claimNew[a] or takeOver[a] or replay[a] or resume[a] or giveUp[a] or runOnHeld[a]
}

pred step {
  (some a: Attempt | claim[a] or call[a] or extend[a] or fail[a] or stop[a] or lose[a] or leaseEnds[a]
                     or (some s: RecordStatus | record[a, s]))
  or (some k: Key | delist[k] or expires[k] or purge[k])
  or keepAll
}

fact traces { init and always step }

-- ---------------------------------------------------------------- invariants

/** At most one completed (or failed) execution is recorded per key within its retention. */
pred atMostOneCompletion { always all k: Key | lone k.done }
assert AtMostOneCompletion { atMostOneCompletion }

/** An attempt whose token another claim replaced never records an outcome. */
pred staleNeverRecords {
  always all a: Attempt | a in Store.superseded implies no s: RecordStatus | record[a, s]
}
assert StaleNeverRecords { staleNeverRecords }

/** A prepare never runs again once its recovery point committed (within the record's retention). */
pred prepareNeverRepeats { always all k: Key | lone k.prepped }
assert PrepareNeverRepeats { prepareNeverRepeats }

/** A worker runs an operation's call only if the store's claim gave the record to its token. */
pred workerRunsOnlyWhatItHolds {
  always all w: WorkerAttempt | call[w] implies w in Store.acquired
}
assert WorkerRunsOnlyWhatItHolds { workerRunsOnlyWhatItHolds }

/** Every answer handed back for a key is the recorded outcome (within its retention). */
pred answersMatchRecord { always all a: Attempt | some a.answer implies a.answer = a.key.result }
assert AnswersMatchRecord { answersMatchRecord }

/** At most one attempt of a key holds a lease that has not ended by the store's clock. */
pred leaseExclusive { always all k: Key | lone (Store.leased & key.k) }

/**
 * What leaseExclusive needs besides the protocol: no call outlasts the record's retention. The
 * store's extendLease is fenced by the token alone, so a stalled call may extend its lease on a
 * record whose retention ended, which the next claim takes as new: two live leases (the check
 * ExtensionPastRetention in checks.als shows the trace). The stale attempt is still fenced out.
 */
pred callsEndWithinRetention { always all a: Attempt | extend[a] implies a.key not in Store.expired }
assert LeaseExclusive { callsEndWithinRetention implies leaseExclusive }

-- ---------------------------------------------------------------- liveness

/**
 * Fair workers, and a store whose clock moves: every lease ends unless renewed by its holder; a
 * worker attempt never crashes, and takes its next step; a worker that again and again finds an
 * operation abandoned takes it over (its passes run at an interval; strong fairness); entries of
 * settled records are removed. Clients may crash anywhere and retry or not.
 */
pred fairness {
  all a: Attempt | (eventually always a in Store.leased) implies (always eventually leaseEnds[a])
  all k: Key | (always eventually workerMayClaim[k]) implies (always eventually some w: key.k & WorkerAttempt | resume[w] or giveUp[w])
  all w: WorkerAttempt {
    always not stop[w]
    (eventually always w.pc = Claimed) implies (always eventually (call[w] or fail[w]))
    (eventually always w.pc = Called) implies (always eventually (record[w, COMPLETED] or record[w, FAILED] or lose[w]))
    (eventually always w.pc = GivingUp) implies (always eventually (record[w, FAILED] or lose[w]))
  }
}

/** A worker attempt that has not claimed yet finds k abandoned, with a recovery point to resume from. */
pred workerMayClaim[k: Key] {
  some w: key.k & WorkerAttempt | w.pc = Idle
  k in Store.pending and abandoned[k] and some k.point
}

/** Under fairness every operation whose claim committed ends completed or failed (or its retention ends first). */
assert EveryOperationEndsFinal {
  fairness implies all k: Key | always (inProgress[k] implies eventually not inProgress[k])
}
