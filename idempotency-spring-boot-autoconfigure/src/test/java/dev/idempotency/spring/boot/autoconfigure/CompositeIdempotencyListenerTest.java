package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyListener;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The context's listeners all hear every callback, whichever the core adds. */
class CompositeIdempotencyListenerTest {

    @Test
    void everyCallbackOfTheListenerReachesEveryListener_evenAfterOneThrows() throws Exception {
        List<String> heard = new ArrayList<>();
        IdempotencyListener failing = recording("first", heard, true);
        IdempotencyListener second = recording("second", heard, false);
        IdempotencyListener composite = CompositeIdempotencyListener.of(List.of(failing, second));
        List<Method> callbacks = Arrays.stream(IdempotencyListener.class.getMethods())
                .filter(m -> m.isDefault() && !Modifier.isStatic(m.getModifiers())).toList();
        assertThat(callbacks).extracting(Method::getName).contains("onOutcome", "onRecovery", "onDuplicate", "onNonDurableCommits");
        for (Method callback : callbacks) {
            Object[] arguments = Arrays.stream(callback.getParameterTypes()).map(t -> t == int.class ? (Object) 0 : null).toArray();
            callback.invoke(composite, arguments);
        }
        for (Method callback : callbacks) {
            assertThat(heard).as(callback.getName()).contains("first:" + callback.getName(), "second:" + callback.getName());
        }
    }

    private static IdempotencyListener recording(String name, List<String> heard, boolean fails) {
        return (IdempotencyListener) Proxy.newProxyInstance(IdempotencyListener.class.getClassLoader(),
                new Class<?>[] {IdempotencyListener.class}, (proxy, method, args) -> {
                    if (method.getDeclaringClass() == Object.class) {
                        return method.getName().equals("toString") ? name : null;
                    }
                    heard.add(name + ":" + method.getName());
                    if (fails) {
                        throw new IllegalStateException("a failing listener");
                    }
                    return null;
                });
    }
}
