package dev.idempotency.spi;

import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How far a leased operation got: its <i>prepare</i> phase committed, together with the claim, and
 * produced a value, which is kept here encoded. A later attempt that takes the claim over resumes
 * after that phase with this value, and never runs it again.
 *
 * <p>Immutable and thread-safe, but for the contents of {@code state}, which are not copied.
 *
 * @param codec the name of the codec that encoded the value
 * @param state the encoded value, or {@code null} for a {@code null} value
 */
public record RecoveryPoint(String codec, byte @Nullable [] state) {

    /** The phase name a store may keep for a recovery point (its only phase today). */
    public static final String PREPARED = "PREPARED";

    /**
     * @param codec the name of the codec that encoded the value
     * @param state the encoded value, or {@code null} for a {@code null} value
     * @throws NullPointerException if {@code codec} is null
     */
    public RecoveryPoint {
        Objects.requireNonNull(codec, "codec");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RecoveryPoint other && codec.equals(other.codec) && Arrays.equals(state, other.state);
    }

    @Override
    public int hashCode() {
        return 31 * codec.hashCode() + Arrays.hashCode(state);
    }

    @Override
    public String toString() {
        return "RecoveryPoint[codec=" + codec + ", state=" + (state == null ? "null" : state.length + " bytes") + "]";
    }
}
