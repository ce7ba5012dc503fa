package dev.idempotency.spring.boot.autoconfigure.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** An order, saved through JPA. */
@Entity
@Table(name = "shop_order")
public class OrderEntity {

    @Id
    private String id;

    private String customer;

    protected OrderEntity() {
    }

    OrderEntity(String id, String customer) {
        this.id = id;
        this.customer = customer;
    }

    String customer() {
        return customer;
    }
}
