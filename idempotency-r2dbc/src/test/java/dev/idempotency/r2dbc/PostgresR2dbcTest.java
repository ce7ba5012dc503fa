package dev.idempotency.r2dbc;

/** The R2DBC engine's promises on POSTGRES. */
class PostgresR2dbcTest extends R2dbcEngineContract {

    @Override
    R2dbcDatabase database() {
        return R2dbcDatabase.POSTGRES;
    }
}
