package dev.idempotency.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idempotency.KeyPolicy;
import org.junit.jupiter.api.Test;

class ForHandlerTest {

    private final HttpIdempotency<Void> layer = HttpIdempotency.<Void>builder(KeyPolicy.ofDefaults()).build();

    @Test
    void noChoiceIsTheLayerAndOneChoiceIsTheSameLayerEveryTime() {
        assertSame(layer, layer.forHandler(new ServerErrors[0], "@X", "h"));
        assertSame(layer, layer.forHandler(new ServerErrors[] {ServerErrors.RECORD}, "@X", "h"));
        HttpIdempotency<Void> released = layer.forHandler(new ServerErrors[] {ServerErrors.RELEASE}, "@X", "h");
        assertEquals(ServerErrors.RELEASE, released.serverErrors());
        assertSame(released, layer.forHandler(new ServerErrors[] {ServerErrors.RELEASE}, "@X", "h"));
        assertSame(released, layer.withServerErrors(ServerErrors.RELEASE));
        assertSame(layer, released.withServerErrors(ServerErrors.RECORD));
    }

    @Test
    void twoChoicesAreRefusedNamingTheAnnotationTheHandlerAndTheCount() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> layer.forHandler(
                new ServerErrors[] {ServerErrors.RECORD, ServerErrors.RELEASE}, "@IdempotentEndpoint", "the handler of POST /orders"));
        assertEquals("@IdempotentEndpoint on the handler of POST /orders names 2 serverErrors choices; name one (RECORD or RELEASE),"
                + " or none for the layer's", e.getMessage());
    }
}
