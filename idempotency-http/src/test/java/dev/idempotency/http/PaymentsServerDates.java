package dev.idempotency.http;

import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/** Reads the HTTP-date of an {@code Idempotency-Key-Expires} header, refusing any form but IMF-fixdate. */
final class PaymentsServerDates {

    private PaymentsServerDates() {
    }

    static Instant parse(String httpDate) {
        if (!httpDate.matches("(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT")) {
            throw new AssertionError("not an IMF-fixdate: " + httpDate);
        }
        return ZonedDateTime.parse(httpDate, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
    }
}
