package dev.idempotency.testsupport;

import java.util.ArrayList;
import java.util.List;

/**
 * The Spring Boot line on the class path (3.x or 4.x), for the Spring tests that run on both: Boot 4
 * moved its auto-configuration classes out of {@code spring-boot-autoconfigure} into a module per
 * technology, under new packages, so a test that names one loads it by the name its line gives it.
 * Class names only: this module does not depend on Spring. Stateless, and so thread-safe.
 */
public final class SpringBootLine {

    /** Boot 4's JPA auto-configuration, in {@code spring-boot-hibernate}. */
    public static final String BOOT4_HIBERNATE_JPA = "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration";
    /** Boot 3's JPA auto-configuration, in {@code spring-boot-autoconfigure}. */
    public static final String BOOT3_HIBERNATE_JPA = "org.springframework.boot.autoconfigure.orm.jpa.HibernateJpaAutoConfiguration";

    private static final String[] BOOT4_JDBC = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration" };
    private static final String[] BOOT3_JDBC = {
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
        "org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration" };

    private SpringBootLine() {
    }

    /** @return whether Boot 4's JDBC auto-configuration is on the class path (otherwise Boot 3's must be) */
    public static boolean isBoot4() {
        return present(BOOT4_JDBC[0]);
    }

    /**
     * @return Boot's auto-configuration of a {@code DataSource} from {@code spring.datasource.*} and of its
     *     transaction manager, of the line on the class path
     * @throws IllegalStateException if neither line's is there
     */
    public static Class<?>[] jdbcAutoConfigurations() {
        String[] names = isBoot4() ? BOOT4_JDBC : BOOT3_JDBC;
        List<Class<?>> classes = new ArrayList<>();
        for (String name : names) {
            try {
                classes.add(Class.forName(name, false, SpringBootLine.class.getClassLoader()));
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("Neither Boot 4's nor Boot 3's JDBC auto-configuration is on the class path: " + name, e);
            }
        }
        return classes.toArray(Class<?>[]::new);
    }

    private static boolean present(String name) {
        try {
            Class.forName(name, false, SpringBootLine.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
