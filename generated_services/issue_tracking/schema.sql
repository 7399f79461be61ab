CREATE TABLE collection (
	custom_mappings JSON, 
	description VARCHAR, 
	name VARCHAR, 
	parent_id VARCHAR, 
	type VARCHAR, 
	id VARCHAR NOT NULL, 
	created_at VARCHAR, 
	updated_at VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE comment (
	body VARCHAR, 
	custom_mappings JSON, 
	collection_id VARCHAR, 
	ticket_id VARCHAR, 
	id VARCHAR NOT NULL, 
	created_at VARCHAR, 
	created_by VARCHAR, 
	updated_at VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE tag (
	custom_mappings JSON, 
	collection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	name VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE ticket (
	assignees JSON, 
	custom_mappings JSON, 
	description VARCHAR, 
	due_date VARCHAR, 
	parent_id VARCHAR, 
	priority VARCHAR, 
	status VARCHAR, 
	subject VARCHAR, 
	tags JSON, 
	type VARCHAR, 
	id VARCHAR NOT NULL, 
	collection_id VARCHAR, 
	completed_at VARCHAR, 
	created_at VARCHAR, 
	created_by VARCHAR, 
	updated_at VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE user (
	custom_mappings JSON, 
	email VARCHAR, 
	first_name VARCHAR, 
	last_name VARCHAR, 
	name VARCHAR, 
	photo_url VARCHAR, 
	collection_id VARCHAR, 
	id VARCHAR NOT NULL, 
	created_at VARCHAR, 
	updated_at VARCHAR, 
	PRIMARY KEY (id)
);

