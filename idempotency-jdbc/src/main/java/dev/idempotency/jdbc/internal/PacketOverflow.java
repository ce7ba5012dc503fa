package dev.idempotency.jdbc.internal;

/**
 * A statement too large for the server.
 *
 * @param statementBytes the statement's size as sent, at most (an upper bound)
 * @param limitBytes the largest statement the server accepts
 * @param setting the server setting that sets the limit, such as {@code max_allowed_packet}
 */
public record PacketOverflow(long statementBytes, long limitBytes, String setting) {
}
