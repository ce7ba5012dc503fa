package dev.idempotency.spring.webmvc;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A request whose attribute writes stay in the wrapper: a handler look-up from a filter sets the
 * attributes a handler mapping sets (the matched pattern, the path variables, the parsed path), and
 * they must not reach the {@code DispatcherServlet}'s own look-up. Not thread-safe; one per look-up.
 */
final class AttributeOverlayRequest extends HttpServletRequestWrapper {

    private static final Object REMOVED = new Object();

    private final Map<String, Object> overlay = new HashMap<>();

    AttributeOverlayRequest(HttpServletRequest request) {
        super(request);
    }

    @Override
    public @Nullable Object getAttribute(String name) {
        Object value = overlay.get(name);
        if (value == REMOVED) {
            return null;
        }
        return value != null ? value : super.getAttribute(name);
    }

    @Override
    public Enumeration<String> getAttributeNames() {
        Set<String> names = new LinkedHashSet<>(Collections.list(super.getAttributeNames()));
        overlay.forEach((name, value) -> {
            if (value == REMOVED) {
                names.remove(name);
            } else {
                names.add(name);
            }
        });
        return Collections.enumeration(names);
    }

    @Override
    public void setAttribute(String name, @Nullable Object value) {
        overlay.put(name, value == null ? REMOVED : value);
    }

    @Override
    public void removeAttribute(String name) {
        overlay.put(name, REMOVED);
    }
}
