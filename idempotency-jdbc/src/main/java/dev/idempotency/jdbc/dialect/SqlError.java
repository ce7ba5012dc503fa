package dev.idempotency.jdbc.dialect;

import org.jspecify.annotations.Nullable;

/**
 * A database's failure as a dialect classifies it: what the driver reported, with no driver type,
 * so that a dialect's questions ({@link SqlDialect#isDuplicateKey}, {@link SqlDialect#isLockTimeout},
 * ...) can be answered for any executor. The JDBC executor builds one from each
 * {@code SQLException} it meets.
 *
 * @param sqlState the SQLState, or {@code null} if the driver gave none
 * @param vendorCode the database's own error code (0 if none)
 * @param message the driver's message, or {@code null}
 * @param driverTimeout whether the driver reported it as its own timeout (JDBC's
 *     {@code SQLTimeoutException}), as some drivers report a query timeout
 */
public record SqlError(@Nullable String sqlState, int vendorCode, @Nullable String message, boolean driverTimeout) {

    /**
     * @param state an SQLState
     * @return whether this error has it
     */
    public boolean hasState(String state) {
        return state.equals(sqlState);
    }

    /** @return the message, or the empty string if there is none */
    public String text() {
        return message == null ? "" : message;
    }
}
