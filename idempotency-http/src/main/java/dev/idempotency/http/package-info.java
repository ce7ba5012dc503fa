/**
 * The {@code Idempotency-Key} header over HTTP. On the server, {@link dev.idempotency.http.HttpIdempotency}
 * is a framework-neutral layer: given a {@link dev.idempotency.http.Request} and the scope of the
 * authenticated client, it runs the handler under the key and answers as the IETF
 * Idempotency-Key draft and Stripe do (400, 409 with {@code Retry-After}, 422, replays with
 * {@code Idempotent-Replayed: true}, errors as {@code application/problem+json}).
 * {@link dev.idempotency.http.JdkHttpHandler} plugs it into the JDK's own HTTP server. On the
 * client, {@link dev.idempotency.http.RetryingHttpClient} sends one key per logical operation and
 * retries with it. Stable: changes follow semantic versioning.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}.
 */
@NullMarked
package dev.idempotency.http;

import org.jspecify.annotations.NullMarked;
