package dev.idempotency.examples.batch;

import dev.idempotency.jdbc.dialect.H2Dialect;

/**
 * H2's dialect, claiming the keys of a chunk one by one, as the library does on SQLite and HSQLDB.
 *
 * <p>A work-around, for the H2 database of this example only: the chunk claim's {@code SELECT}
 * finds a chunk's records with {@code (scope = ? AND key_id = ?) OR ...}, which H2 2.3 answers by
 * reading every record of the scope (its plan uses the primary key for {@code scope} alone) and
 * testing each against every pair of the chunk. A job's chunks then cost time in proportion to the
 * records already written: the 100,000 instructions took minutes, and a rerun longer still. Key by
 * key, each claim is one primary-key look-up. Drop this class once the library's H2 dialect
 * looks a chunk up by its full key.
 */
final class KeyByKeyH2Dialect extends H2Dialect {

    @Override
    protected boolean multiRowClaims() {
        return false;
    }
}
