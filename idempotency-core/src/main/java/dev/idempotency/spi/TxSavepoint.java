package dev.idempotency.spi;

/** A point inside a transaction to which its later writes can be undone. Used by one thread, like its transaction. */
public interface TxSavepoint {

    /** Undoes every write made in the transaction since this savepoint was taken. */
    void rollback();

    /** Forgets the savepoint; the writes since it stay. */
    void release();
}
