package dev.idempotency.jdbc.dialect;

import java.util.Optional;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/** How the shipped dialects judge the answer of a durability query ({@link SqlDialect#nonDurableCommits}). */
final class DurabilityAnswers {

    private DurabilityAnswers() {
    }

    /**
     * @param answer a durability query's answer, {@code null} for no row
     * @param durable the setting's value under which commits are durable
     * @param message what is said of another value, given it stripped of white space
     * @return empty if there is no answer or it is {@code durable} (white space aside); else the message
     */
    static Optional<String> unless(@Nullable String answer, String durable, UnaryOperator<String> message) {
        return answer == null || answer.strip().equals(durable) ? Optional.empty() : Optional.of(message.apply(answer.strip()));
    }
}
