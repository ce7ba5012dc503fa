package dev.idempotency.spring.boot3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.testsupport.SpringBootLine;
import org.apache.catalina.util.ServerInfo;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;
import org.springframework.core.SpringVersion;

/**
 * What this module's tests run on: Spring Boot 3.5 and what it brings, not Boot 4. Without it, a
 * dependency that pulled the newer line in would leave every test here green and prove nothing
 * about the older one.
 */
class BootLineTest {

    @Test
    void theTestsRunOnBoot35_withFramework62_Hibernate66_andTomcat101() {
        assertThat(SpringBootVersion.getVersion()).isEqualTo(System.getProperty("idempotency.spring-boot3.version"));
        assertThat(SpringBootLine.isBoot4()).as("Boot 4's JDBC auto-configuration on the class path").isFalse();
        assertThat(SpringVersion.getVersion()).startsWith("6.2.");
        assertThat(org.hibernate.Version.getVersionString()).startsWith("6.6.");
        assertThat(ServerInfo.getServerNumber()).startsWith("10.1.");
    }
}
