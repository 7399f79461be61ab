CREATE TABLE free_trial_number (
	"freeTrialNumbers" JSON, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE message (
	"createTimestamp" VARCHAR, 
	"deliveryNotification" BOOLEAN, 
	direction VARCHAR, 
	from_ VARCHAR NOT NULL, 
	"messageContent" VARCHAR, 
	multimedia JSON, 
	"queuePriority" INTEGER, 
	"receivedTimestamp" VARCHAR, 
	"retryTimeout" INTEGER, 
	"scheduleSend" VARCHAR, 
	"sentTimestamp" VARCHAR, 
	status VARCHAR, 
	"statusCallbackUrl" VARCHAR, 
	tags JSON, 
	"to" VARCHAR NOT NULL, 
	"messageId" VARCHAR NOT NULL, 
	PRIMARY KEY ("messageId")
);

CREATE TABLE optout (
	"createTimestamp" VARCHAR, 
	"optoutNumber" VARCHAR, 
	virtual_number_id VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE report (
	"reportExpiry" VARCHAR, 
	"reportStatus" VARCHAR, 
	"reportType" VARCHAR, 
	"reportUrl" VARCHAR, 
	"reportId" VARCHAR NOT NULL, 
	PRIMARY KEY ("reportId")
);

CREATE TABLE report_message (
	"endDate" VARCHAR NOT NULL, 
	filter VARCHAR, 
	"reportCallbackUrl" VARCHAR, 
	"startDate" VARCHAR NOT NULL, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE virtual_number (
	"lastUse" VARCHAR, 
	"replyCallbackUrl" VARCHAR, 
	tags JSON, 
	"virtualNumber" VARCHAR NOT NULL, 
	PRIMARY KEY ("virtualNumber")
);

