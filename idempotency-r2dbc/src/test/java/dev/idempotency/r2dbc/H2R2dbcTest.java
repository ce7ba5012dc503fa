package dev.idempotency.r2dbc;

/** The R2DBC engine's promises on H2. */
class H2R2dbcTest extends R2dbcEngineContract {

    @Override
    R2dbcDatabase database() {
        return R2dbcDatabase.H2;
    }
}
