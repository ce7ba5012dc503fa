/**
 * A charge service whose work has an effect outside the database: it charges a card at a payment
 * provider, in lease mode ({@link dev.idempotency.LeasedIdempotency#run}), against a fake provider
 * that deduplicates on its own {@code Idempotency-Key} header as a real one does.
 */
package dev.idempotency.examples.charges;
