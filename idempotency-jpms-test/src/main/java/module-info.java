/**
 * A user's module: it reads the library by its published module names, from the module path.
 * If a jar lost its {@code Automatic-Module-Name}, this would not compile.
 *
 * <p>The library's jars are automatic modules, which cannot declare what they need: an automatic
 * module reads every module, but does not bring an explicit one into the graph. slf4j-api is an
 * explicit module, so a user's module requires it too (or the launch adds
 * {@code --add-modules org.slf4j}); without it the first log call fails with
 * {@code NoClassDefFoundError: org/slf4j/LoggerFactory}.
 */
module dev.idempotency.jpms.test {
    requires dev.idempotency;
    requires dev.idempotency.jdbc;
    requires java.sql;
    requires org.slf4j;
}
