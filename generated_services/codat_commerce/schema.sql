CREATE TABLE commerce_customer (
	addresses JSON, 
	"customerName" VARCHAR, 
	"defaultCurrency" VARCHAR, 
	"emailAddress" VARCHAR, 
	note VARCHAR, 
	phone VARCHAR, 
	"sourceModifiedDate" VARCHAR, 
	company_id VARCHAR, 
	connection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	"createdDate" VARCHAR, 
	"modifiedDate" VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE commerce_dispute (
	currency VARCHAR, 
	"disputedTransactions" JSON, 
	"dueDate" VARCHAR, 
	reason VARCHAR, 
	status VARCHAR, 
	"totalAmount" FLOAT, 
	"sourceModifiedDate" VARCHAR, 
	company_id VARCHAR, 
	connection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	"createdDate" VARCHAR, 
	"modifiedDate" VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE commerce_location (
	address JSON, 
	name VARCHAR, 
	"sourceModifiedDate" VARCHAR, 
	company_id VARCHAR, 
	connection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	"modifiedDate" VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE commerce_order (
	"closedDate" VARCHAR, 
	country VARCHAR, 
	currency VARCHAR, 
	"customerRef" JSON, 
	"locationRef" JSON, 
	"orderLineItems" JSON, 
	"orderNumber" VARCHAR, 
	payments JSON, 
	"serviceCharges" JSON, 
	"totalAmount" FLOAT, 
	"totalDiscount" FLOAT, 
	"totalGratuity" FLOAT, 
	"totalRefund" FLOAT, 
	"totalTaxAmount" FLOAT, 
	"sourceModifiedDate" VARCHAR, 
	company_id VARCHAR, 
	connection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	"createdDate" VARCHAR, 
	"modifiedDate" VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE commerce_payment (
	amount FLOAT, 
	currency VARCHAR, 
	"dueDate" VARCHAR, 
	"paymentMethodRef" JSON, 
	"paymentProvider" VARCHAR, 
	status VARCHAR, 
	"sourceModifiedDate" VARCHAR, 
	company_id VARCHAR, 
	connection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	"createdDate" VARCHAR, 
	"modifiedDate" VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE commerce_payment_method (
	name VARCHAR, 
	status VARCHAR, 
	"sourceModifiedDate" VARCHAR, 
	company_id VARCHAR, 
	connection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	"modifiedDate" VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE commerce_product (
	categorization VARCHAR, 
	description VARCHAR, 
	"isGiftCard" BOOLEAN, 
	name VARCHAR, 
	variants JSON, 
	company_id VARCHAR, 
	connection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE commerce_product_category (
	"ancestorRefs" JSON, 
	"hasChildren" BOOLEAN, 
	name VARCHAR, 
	"sourceModifiedDate" VARCHAR, 
	company_id VARCHAR, 
	connection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	"modifiedDate" VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE commerce_tax_component (
	"isCompound" BOOLEAN, 
	name VARCHAR, 
	rate FLOAT, 
	"sourceModifiedDate" VARCHAR, 
	company_id VARCHAR, 
	connection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	"modifiedDate" VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE commerce_transaction (
	currency VARCHAR, 
	"subType" VARCHAR, 
	"totalAmount" FLOAT, 
	"transactionSourceRef" JSON, 
	type VARCHAR, 
	"sourceCreatedDate" VARCHAR, 
	"sourceModifiedDate" VARCHAR, 
	company_id VARCHAR, 
	connection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	"createdDate" VARCHAR, 
	"modifiedDate" VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE company (
	name VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE connection (
	name VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

