/**
 * The batch job example: {@link dev.idempotency.examples.batch.PaymentImportJob} imports payment
 * instructions from a file into a ledger in chunks, with a progress bar; killed at any moment and
 * run again, it books each instruction exactly once.
 */
package dev.idempotency.examples.batch;
