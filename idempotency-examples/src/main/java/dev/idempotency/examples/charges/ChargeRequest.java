package dev.idempotency.examples.charges;

import java.util.Objects;

/**
 * The body of {@code POST /charges}: who pays, with which card, how much.
 *
 * @param customer who pays
 * @param card the card's token at the payment provider
 * @param cents how much, in cents
 */
public record ChargeRequest(String customer, String card, long cents) {

    /**
     * @throws NullPointerException if {@code customer} or {@code card} is null
     * @throws IllegalArgumentException if {@code cents} is not positive
     */
    public ChargeRequest {
        Objects.requireNonNull(customer, "customer");
        Objects.requireNonNull(card, "card");
        if (cents <= 0) {
            throw new IllegalArgumentException("cents must be positive, was " + cents);
        }
    }
}
