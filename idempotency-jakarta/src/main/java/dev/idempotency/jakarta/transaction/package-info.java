/**
 * Transactional mode inside Jakarta Transactions (JTA): {@link dev.idempotency.jakarta.transaction.JtaIdempotency}
 * in the application's own transaction, {@link dev.idempotency.jakarta.transaction.JtaTransactions}
 * for the transactions the library begins and ends itself.
 */
@NullMarked
package dev.idempotency.jakarta.transaction;

import org.jspecify.annotations.NullMarked;
