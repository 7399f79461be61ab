CREATE TABLE comment (
	text VARCHAR NOT NULL, 
	task_id VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE note (
	description VARCHAR NOT NULL, 
	domain VARCHAR NOT NULL, 
	target JSON, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE task (
	assignee JSON, 
	context VARCHAR NOT NULL, 
	description VARCHAR NOT NULL, 
	domain VARCHAR NOT NULL, 
	"dueDate" VARCHAR NOT NULL, 
	followers JSON, 
	name VARCHAR NOT NULL, 
	"parentTaskId" VARCHAR NOT NULL, 
	priority VARCHAR NOT NULL, 
	"surrogateKey" VARCHAR NOT NULL, 
	target JSON, 
	status VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

