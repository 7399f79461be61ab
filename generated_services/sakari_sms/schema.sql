CREATE TABLE account (
	name VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE campaign (
	filters JSON, 
	template VARCHAR, 
	"trigger" JSON, 
	account_id VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE contact (
	email VARCHAR, 
	"firstName" VARCHAR, 
	"lastName" VARCHAR, 
	mobile JSON, 
	attributes JSON, 
	tags JSON, 
	created JSON, 
	error JSON, 
	updated JSON, 
	valid BOOLEAN, 
	account_id VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE conversation (
	closed BOOLEAN, 
	contact JSON, 
	created JSON, 
	"lastMessage" JSON, 
	"phoneNumber" JSON, 
	unread JSON, 
	updated JSON, 
	account_id VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE message (
	contact JSON, 
	conversation JSON, 
	created JSON, 
	error JSON, 
	media JSON, 
	message VARCHAR, 
	outgoing BOOLEAN, 
	"phoneNumber" VARCHAR, 
	price FLOAT, 
	read BOOLEAN, 
	segments FLOAT, 
	status VARCHAR, 
	template VARCHAR, 
	updated JSON, 
	contacts JSON, 
	"conversationStrategy" VARCHAR, 
	conversations JSON, 
	filters JSON, 
	"phoneNumberFilter" JSON, 
	type VARCHAR, 
	account_id VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE template (
	name VARCHAR, 
	template VARCHAR, 
	type VARCHAR, 
	account_id VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE webhook (
	"eventTypes" JSON, 
	account_id VARCHAR, 
	url VARCHAR NOT NULL, 
	PRIMARY KEY (url)
);

