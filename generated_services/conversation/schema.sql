CREATE TABLE conversation (
	links JSON, 
	name VARCHAR, 
	uuid VARCHAR, 
	display_name VARCHAR, 
	image_url VARCHAR, 
	properties JSON, 
	api_key VARCHAR, 
	members JSON, 
	numbers JSON, 
	sequence_number VARCHAR, 
	timestamp JSON, 
	href VARCHAR, 
	member_id VARCHAR, 
	state VARCHAR, 
	user_id VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE event (
	body JSON, 
	from_ VARCHAR NOT NULL, 
	href VARCHAR, 
	state VARCHAR, 
	timestamp VARCHAR, 
	"to" VARCHAR, 
	type VARCHAR NOT NULL, 
	conversation_id VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE leg (
	embedded JSON, 
	links JSON, 
	conversation_uuid VARCHAR, 
	from_ JSON, 
	start_end VARCHAR, 
	start_time VARCHAR, 
	state VARCHAR, 
	"to" JSON, 
	type VARCHAR, 
	uuid VARCHAR NOT NULL, 
	PRIMARY KEY (uuid)
);

CREATE TABLE member (
	name VARCHAR, 
	state VARCHAR, 
	user_id VARCHAR NOT NULL, 
	user_name VARCHAR, 
	action VARCHAR, 
	channel JSON, 
	knocking_id VARCHAR, 
	media JSON, 
	member_id_inviting VARCHAR, 
	href VARCHAR, 
	id VARCHAR, 
	conversation_id VARCHAR, 
	member_id VARCHAR NOT NULL, 
	PRIMARY KEY (member_id)
);

CREATE TABLE user (
	href VARCHAR, 
	name VARCHAR, 
	display_name VARCHAR, 
	image_url VARCHAR, 
	channels JSON, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

